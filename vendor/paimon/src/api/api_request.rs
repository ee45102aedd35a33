// Licensed to the Apache Software Foundation (ASF) under one
// or more contributor license agreements.  See the NOTICE file
// distributed with this work for additional information
// regarding copyright ownership.  The ASF licenses this file
// to you under the Apache License, Version 2.0 (the
// "License"); you may not use this file except in compliance
// with the License.  You may obtain a copy of the License at
//
//   http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

//! REST API request types for Paimon.
//!
//! This module contains all request structures used in REST API calls.

use serde::{Deserialize, Deserializer, Serialize};
use std::collections::HashMap;

use crate::api::management::{
    bad_request, is_blank, ColumnMask, DataPolicy, PermissionAccess, PermissionAssignment,
    PermissionResource, PolicyType, RowFilter,
};
use crate::{
    catalog::{Function, FunctionDefinition, Identifier, ViewSchema},
    spec::{DataField, PartitionStatistics, Schema, SchemaChange},
};

/// Request to create a new database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateDatabaseRequest {
    /// The name of the database to create.
    pub name: String,
    /// Optional configuration options for the database.
    pub options: HashMap<String, String>,
}

impl CreateDatabaseRequest {
    /// Create a new CreateDatabaseRequest.
    pub fn new(name: String, options: HashMap<String, String>) -> Self {
        Self { name, options }
    }
}

/// Request to alter a database's configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AlterDatabaseRequest {
    /// Keys to remove from the database options.
    pub removals: Vec<String>,
    /// Key-value pairs to update in the database options.
    pub updates: HashMap<String, String>,
}

impl AlterDatabaseRequest {
    /// Create a new AlterDatabaseRequest.
    pub fn new(removals: Vec<String>, updates: HashMap<String, String>) -> Self {
        Self { removals, updates }
    }
}

/// Request to rename a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RenameTableRequest {
    /// The source table identifier.
    pub source: Identifier,
    /// The destination table identifier.
    pub destination: Identifier,
}

/// Request to create a table tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTagRequest {
    pub tag_name: String,
    pub snapshot_id: Option<i64>,
    pub time_retained: Option<String>,
}

impl CreateTagRequest {
    pub fn new(tag_name: String, snapshot_id: Option<i64>) -> Self {
        Self {
            tag_name,
            snapshot_id,
            time_retained: None,
        }
    }
}

impl RenameTableRequest {
    /// Create a new RenameTableRequest.
    pub fn new(source: Identifier, destination: Identifier) -> Self {
        Self {
            source,
            destination,
        }
    }
}

/// Request to create a new table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTableRequest {
    /// The identifier for the table to create.
    pub identifier: Identifier,
    /// The schema definition for the table.
    pub schema: Schema,
}

impl CreateTableRequest {
    /// Create a new CreateTableRequest.
    pub fn new(identifier: Identifier, schema: Schema) -> Self {
        Self { identifier, schema }
    }
}

/// Request to create a persistent view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateViewRequest {
    /// The identifier for the view to create.
    pub identifier: Identifier,
    /// The schema and SQL definitions for the view.
    pub schema: ViewSchema,
}

impl CreateViewRequest {
    /// Create a new create-view request.
    pub fn new(identifier: Identifier, schema: ViewSchema) -> Self {
        Self { identifier, schema }
    }
}

/// Request to create a persistent function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateFunctionRequest {
    /// Unqualified function name.
    pub name: String,
    /// Declared input parameters.
    pub input_params: Option<Vec<DataField>>,
    /// Declared return parameters.
    pub return_params: Option<Vec<DataField>>,
    /// Whether the function is deterministic.
    pub deterministic: bool,
    /// Engine-specific function definitions.
    pub definitions: HashMap<String, FunctionDefinition>,
    /// Optional function comment.
    pub comment: Option<String>,
    /// Function options.
    pub options: HashMap<String, String>,
}

impl CreateFunctionRequest {
    /// Create a request from a catalog function.
    pub fn from_function(function: &Function) -> Self {
        Self {
            name: function.name().to_string(),
            input_params: function.input_params().map(<[_]>::to_vec),
            return_params: function.return_params().map(<[_]>::to_vec),
            deterministic: function.is_deterministic(),
            definitions: function.definitions().clone(),
            comment: function.comment().map(str::to_string),
            options: function.options().clone(),
        }
    }
}

/// Request to alter a table's schema.
///
/// Wire-compatible with Java Paimon's `AlterTableRequest` (`{"changes": [...]}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AlterTableRequest {
    /// The ordered list of schema changes to apply.
    pub changes: Vec<SchemaChange>,
}

impl AlterTableRequest {
    /// Create a new AlterTableRequest.
    pub fn new(changes: Vec<SchemaChange>) -> Self {
        Self { changes }
    }
}

/// Request to create table partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatePartitionsRequest {
    /// Partition specs to register.
    pub partition_specs: Vec<HashMap<String, String>>,
    /// Whether already registered partitions should be ignored.
    #[serde(
        default = "default_true",
        deserialize_with = "deserialize_null_to_true"
    )]
    pub ignore_if_exists: bool,
    /// Statistics reported for the partitions, matched to them by spec; absent unless reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_statistics: Option<Vec<PartitionStatistics>>,
    /// Whether the reported statistics replace what the catalog holds rather than add to it;
    /// present only together with `partition_statistics`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace_statistics: Option<bool>,
    /// Per-partition catalog options, aligned with `partition_specs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_options: Option<Vec<HashMap<String, String>>>,
}

impl CreatePartitionsRequest {
    /// Create a request to register partitions.
    pub fn new(partition_specs: Vec<HashMap<String, String>>, ignore_if_exists: bool) -> Self {
        Self {
            partition_specs,
            ignore_if_exists,
            partition_statistics: None,
            replace_statistics: None,
            partition_options: None,
        }
    }

    /// Report statistics for the partitions in the same request.
    pub fn with_statistics(mut self, statistics: Vec<PartitionStatistics>, replace: bool) -> Self {
        self.partition_statistics = Some(statistics);
        self.replace_statistics = Some(replace);
        self
    }

    /// Set catalog options for each partition in the request.
    pub fn with_partition_options(mut self, options: Vec<HashMap<String, String>>) -> Self {
        self.partition_options = Some(options);
        self
    }
}

/// Request to drop (unregister) table partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DropPartitionsRequest {
    /// Partition specs to unregister.
    pub partition_specs: Vec<HashMap<String, String>>,
    /// Whether missing partitions should be ignored.
    #[serde(
        default = "default_true",
        deserialize_with = "deserialize_null_to_true"
    )]
    pub ignore_if_not_exists: bool,
}

impl DropPartitionsRequest {
    /// Create a request to unregister partitions.
    pub fn new(partition_specs: Vec<HashMap<String, String>>, ignore_if_not_exists: bool) -> Self {
        Self {
            partition_specs,
            ignore_if_not_exists,
        }
    }
}

/// Request to look up registered partitions by their complete specs.
///
/// Wire-compatible with Java `ListPartitionsByNamesRequest`, whose field is `specs` rather than
/// the `partitionSpecs` the create and drop requests use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListPartitionsByNamesRequest {
    /// Complete partition specs to look up.
    pub specs: Vec<HashMap<String, String>>,
}

impl ListPartitionsByNamesRequest {
    /// Create a request to look up partitions by their complete specs.
    pub fn new(specs: Vec<HashMap<String, String>>) -> Self {
        Self { specs }
    }
}

/// Request to list partitions matching a partition predicate.
///
/// Wire-compatible with Java `ListPartitionsByFilterRequest`: the predicate travels as its JSON
/// text inside the request body, and absent fields are left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPartitionsByFilterRequest {
    /// Partition predicate in the REST catalog predicate JSON format.
    pub filter: String,
    /// Partition-name pattern combined with the filter as a conjunction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_name_pattern: Option<String>,
    /// Maximum number of partitions in one page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_results: Option<u32>,
    /// Token of the page to return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
}

impl ListPartitionsByFilterRequest {
    /// Create a request for one page of partitions matching `filter`.
    pub fn new(
        filter: String,
        partition_name_pattern: Option<String>,
        max_results: Option<u32>,
        page_token: Option<String>,
    ) -> Self {
        Self {
            filter,
            partition_name_pattern,
            max_results,
            page_token,
        }
    }
}

fn default_true() -> bool {
    true
}

fn deserialize_null_to_true<'de, D>(deserializer: D) -> Result<bool, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(Option::<bool>::deserialize(deserializer)?.unwrap_or(true))
}

/// Request for auth table query: the projected columns of the query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthTableQueryRequest {
    /// Projected column names; `None` means all columns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub select: Option<Vec<String>>,
}

impl AuthTableQueryRequest {
    /// Create a new AuthTableQueryRequest.
    pub fn new(select: Option<Vec<String>>) -> Self {
        Self { select }
    }
}

/// Body of `POST {prefix}/permissions/revoke`: the assignment identity only. Revoking a
/// `COLUMN` assignment removes its whole column range, so no `columns` travel here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RevokePermissionRequest {
    pub resource: PermissionResource,
    pub access: String,
    pub principal: String,
}

impl RevokePermissionRequest {
    pub fn new(resource: PermissionResource, access: &str, principal: &str) -> crate::Result<Self> {
        let access = PermissionAccess::canonicalize_for(resource.resource_type(), access)?;
        PermissionAssignment::validate_principal(principal)?;
        Ok(Self {
            resource: resource.canonicalized()?,
            access,
            principal: principal.to_string(),
        })
    }
}

/// Body of `POST .../tables/{table}/policies`: the policy without its resource, which the
/// path already names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_filter: Option<RowFilter>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column_mask: Option<ColumnMask>,
    pub principal: String,
}

impl From<&DataPolicy> for PolicyRequest {
    fn from(policy: &DataPolicy) -> Self {
        Self {
            row_filter: policy.row_filter().cloned(),
            column_mask: policy.column_mask().cloned(),
            principal: policy.principal().to_string(),
        }
    }
}

/// Body of `POST .../tables/{table}/policies/drop`: a policy identity (Java `DropPolicyRequest`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropPolicyRequest {
    #[serde(rename = "type")]
    pub policy_type: PolicyType,
    pub principal: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
}

impl DropPolicyRequest {
    pub fn new(
        policy_type: PolicyType,
        principal: &str,
        column: Option<&str>,
    ) -> crate::Result<Self> {
        PermissionAssignment::validate_principal(principal)?;
        let column = column.filter(|column| !is_blank(column));
        match (policy_type, column) {
            (PolicyType::RowFilter, Some(_)) => {
                Err(bad_request("ROW_FILTER identity cannot contain a column."))
            }
            (PolicyType::ColumnMasking, None) => Err(bad_request(
                "column is required for COLUMN_MASKING identity.",
            )),
            (_, column) => Ok(Self {
                policy_type,
                principal: principal.to_string(),
                column: column.map(str::to_string),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_create_database_request_serialization() {
        let mut options = HashMap::new();
        options.insert("key".to_string(), "value".to_string());
        let req = CreateDatabaseRequest::new("test_db".to_string(), options);

        let json = serde_json::to_string(&req).unwrap();
        assert!(json.contains("\"name\":\"test_db\""));
        assert!(json.contains("\"options\""));
    }

    #[test]
    fn test_create_tag_request_serialization() {
        let request = CreateTagRequest::new("release-1".to_string(), Some(42));
        assert_eq!(
            serde_json::to_value(request).unwrap(),
            serde_json::json!({
                "tagName": "release-1",
                "snapshotId": 42,
                "timeRetained": null
            })
        );
    }

    #[test]
    fn test_alter_database_request_serialization() {
        let mut updates = HashMap::new();
        updates.insert("key".to_string(), "new_value".to_string());
        let req = AlterDatabaseRequest::new(vec!["old_key".to_string()], updates);

        let json = serde_json::to_string(&req).unwrap();
        assert!(json.contains("\"removals\":[\"old_key\"]"));
        assert!(json.contains("\"updates\""));
    }

    #[test]
    fn test_auth_table_query_request_serialization() {
        let req = AuthTableQueryRequest::new(Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(
            serde_json::to_string(&req).unwrap(),
            r#"{"select":["a","b"]}"#
        );
        // `None` omits the key entirely (matches the server's optional field).
        let req = AuthTableQueryRequest::new(None);
        assert_eq!(serde_json::to_string(&req).unwrap(), "{}");
    }

    #[test]
    fn test_revoke_permission_request_canonicalizes_access_and_carries_only_the_identity() {
        let request = RevokePermissionRequest::new(
            PermissionResource::table("sales", "orders"),
            "select",
            "analyst",
        )
        .unwrap();
        assert_eq!(
            serde_json::to_string(&request).unwrap(),
            r#"{"resource":{"type":"TABLE","database":"sales","table":"orders"},"access":"SELECT","principal":"analyst"}"#
        );
        let blank_view: PermissionResource = serde_json::from_str(
            r#"{"type":"TABLE","database":"sales","table":"orders","view":""}"#,
        )
        .unwrap();
        let request = RevokePermissionRequest::new(blank_view, "select", "analyst").unwrap();
        assert_eq!(
            serde_json::to_string(&request).unwrap(),
            r#"{"resource":{"type":"TABLE","database":"sales","table":"orders"},"access":"SELECT","principal":"analyst"}"#
        );
        let error =
            RevokePermissionRequest::new(PermissionResource::catalog(), "select", "analyst")
                .unwrap_err();
        assert!(
            error.to_string().contains("not valid for CATALOG"),
            "{error}"
        );
    }

    #[test]
    fn test_policy_request_requires_a_definition_and_carries_no_resource() {
        let policy = DataPolicy::new_column_mask(
            PermissionResource::table("sales", "orders"),
            ColumnMask::new("email", "{}").unwrap(),
            "analyst",
        )
        .unwrap();
        assert_eq!(
            serde_json::to_value(PolicyRequest::from(&policy)).unwrap(),
            serde_json::json!({"columnMask": {"onColumn": "email", "transform": "{}"}, "principal": "analyst"})
        );
        // A policy with neither definition, or with both, cannot be deserialized at all, so it
        // can never reach a request body. Java's `@JsonCreator` constructor rejects the same two.
        for body in [
            r#"{"resource":{"type":"TABLE","database":"sales","table":"orders"},"principal":"analyst"}"#,
            r#"{"resource":{"type":"TABLE","database":"sales","table":"orders"},"rowFilter":{"predicate":"{}"},"columnMask":{"onColumn":"email","transform":"{}"},"principal":"analyst"}"#,
        ] {
            let error = serde_json::from_str::<DataPolicy>(body).unwrap_err();
            assert!(error.to_string().contains("exactly one"), "{error}");
        }
    }

    #[test]
    fn test_drop_policy_request_round_trip_and_identity_rules() {
        let request =
            DropPolicyRequest::new(PolicyType::ColumnMasking, "analyst", Some("email")).unwrap();
        let json = serde_json::to_string(&request).unwrap();
        assert_eq!(
            json,
            r#"{"type":"COLUMN_MASKING","principal":"analyst","column":"email"}"#
        );
        assert_eq!(
            serde_json::from_str::<DropPolicyRequest>(&json).unwrap(),
            request
        );
        assert_eq!(
            serde_json::to_string(
                &DropPolicyRequest::new(PolicyType::RowFilter, "analyst", Some(" ")).unwrap()
            )
            .unwrap(),
            r#"{"type":"ROW_FILTER","principal":"analyst"}"#
        );
        let message = |result: crate::Result<DropPolicyRequest>| result.unwrap_err().to_string();
        assert!(message(DropPolicyRequest::new(
            PolicyType::ColumnMasking,
            "analyst",
            None
        ))
        .contains("column is required"));
        assert!(message(DropPolicyRequest::new(
            PolicyType::RowFilter,
            "analyst",
            Some("email")
        ))
        .contains("cannot contain a column"));
        assert!(
            message(DropPolicyRequest::new(PolicyType::RowFilter, " ", None))
                .contains("principal cannot be empty")
        );

        // Blank here is Java `String.trim()`, not Rust's Unicode `trim()`: NUL is blank and a
        // non-breaking space is not. The two disagree in opposite directions.
        assert_eq!(
            DropPolicyRequest::new(PolicyType::ColumnMasking, "analyst", Some("\u{a0}"))
                .unwrap()
                .column
                .as_deref(),
            Some("\u{a0}")
        );
        assert!(message(DropPolicyRequest::new(
            PolicyType::RowFilter,
            "analyst",
            Some("\u{a0}")
        ))
        .contains("cannot contain a column"));
        assert!(
            DropPolicyRequest::new(PolicyType::RowFilter, "analyst", Some("\0"))
                .unwrap()
                .column
                .is_none()
        );
        assert!(message(DropPolicyRequest::new(
            PolicyType::ColumnMasking,
            "analyst",
            Some("\0")
        ))
        .contains("column is required"));
    }

    #[test]
    fn test_create_partitions_request_serialization() {
        let req = CreatePartitionsRequest::new(
            vec![HashMap::from([
                ("dt".to_string(), "2026-07-22".to_string()),
                ("hour".to_string(), "10".to_string()),
            ])],
            false,
        );

        assert_eq!(
            serde_json::to_value(req).unwrap(),
            serde_json::json!({
                "partitionSpecs": [{
                    "dt": "2026-07-22",
                    "hour": "10"
                }],
                "ignoreIfExists": false
            })
        );
    }

    #[test]
    fn test_create_partitions_request_sends_statistics_only_when_reported() {
        let spec = HashMap::from([("dt".to_string(), "2026-07-22".to_string())]);
        let request = CreatePartitionsRequest::new(vec![spec.clone()], true).with_statistics(
            vec![PartitionStatistics {
                spec: spec.clone(),
                record_count: -1,
                file_size_in_bytes: 1024,
                file_count: 2,
                last_file_creation_time: 1_700_000_000_000,
                total_buckets: -1,
            }],
            true,
        );

        assert_eq!(
            serde_json::to_value(request).unwrap(),
            serde_json::json!({
                "partitionSpecs": [{"dt": "2026-07-22"}],
                "ignoreIfExists": true,
                "partitionStatistics": [{
                    "spec": {"dt": "2026-07-22"},
                    "recordCount": -1,
                    "fileSizeInBytes": 1024,
                    "fileCount": 2,
                    "lastFileCreationTime": 1_700_000_000_000_i64,
                    "totalBuckets": -1
                }],
                "replaceStatistics": true
            })
        );
    }

    #[test]
    fn test_drop_partitions_request_serialization() {
        let req = DropPartitionsRequest::new(
            vec![HashMap::from([(
                "dt".to_string(),
                "2026-07-22".to_string(),
            )])],
            false,
        );

        assert_eq!(
            serde_json::to_value(req).unwrap(),
            serde_json::json!({
                "partitionSpecs": [{"dt": "2026-07-22"}],
                "ignoreIfNotExists": false
            })
        );
    }

    #[test]
    fn test_partition_request_flags_default_to_true() {
        for json in [
            serde_json::json!({"partitionSpecs": []}),
            serde_json::json!({"partitionSpecs": [], "ignoreIfExists": null}),
        ] {
            let request: CreatePartitionsRequest = serde_json::from_value(json).unwrap();
            assert!(request.ignore_if_exists);
        }
        for json in [
            serde_json::json!({"partitionSpecs": []}),
            serde_json::json!({"partitionSpecs": [], "ignoreIfNotExists": null}),
        ] {
            let request: DropPartitionsRequest = serde_json::from_value(json).unwrap();
            assert!(request.ignore_if_not_exists);
        }
    }

    #[test]
    fn test_list_partitions_by_names_request_uses_the_specs_field() {
        let request = ListPartitionsByNamesRequest::new(vec![HashMap::from([(
            "dt".to_string(),
            "2026-07-22".to_string(),
        )])]);

        assert_eq!(
            serde_json::to_value(request).unwrap(),
            serde_json::json!({"specs": [{"dt": "2026-07-22"}]})
        );
    }

    #[test]
    fn test_list_partitions_by_filter_request_leaves_out_absent_fields() {
        let request = ListPartitionsByFilterRequest::new("{}".to_string(), None, None, None);
        assert_eq!(
            serde_json::to_value(request).unwrap(),
            serde_json::json!({"filter": "{}"})
        );

        let request = ListPartitionsByFilterRequest::new(
            "{}".to_string(),
            Some("dt=a/%".to_string()),
            Some(1000),
            Some("next".to_string()),
        );
        assert_eq!(
            serde_json::to_value(request).unwrap(),
            serde_json::json!({
                "filter": "{}",
                "partitionNamePattern": "dt=a/%",
                "maxResults": 1000,
                "pageToken": "next"
            })
        );
    }

    #[test]
    fn test_rename_table_request_serialization() {
        let source = Identifier::new("db1".to_string(), "table1".to_string());
        let destination = Identifier::new("db2".to_string(), "table2".to_string());
        let req = RenameTableRequest::new(source, destination);

        let json = serde_json::to_string(&req).unwrap();
        assert!(json.contains("\"source\""));
        assert!(json.contains("\"destination\""));
    }
}
