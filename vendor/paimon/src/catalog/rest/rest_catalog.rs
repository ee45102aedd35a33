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

//! REST catalog implementation for Apache Paimon.
//!
//! This module provides a REST-based catalog that communicates with
//! a Paimon REST catalog server for database and table CRUD operations.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;

use crate::api::rest_api::RESTApi;
use crate::api::rest_error::RestError;
use crate::api::{
    DataPolicy, GetTagResponse, ListPermissionsRequest, ListPoliciesRequest, PagedList,
    PermissionAssignment, PermissionResource, PolicyType,
};
use crate::catalog::{
    list_partitions_from_file_system, Catalog, Database, Identifier, DB_LOCATION_PROP,
};
use crate::common::{CatalogOptions, Options};
use crate::error::Error;
use crate::io::cache::{create_local_cache_with_namespace, LocalCache};
use crate::io::FileIOCacheContext;
use crate::spec::{Partition, PartitionStatistics, Schema, SchemaChange};
use crate::table::{RESTEnv, Table};
use crate::Result;

const PARTITION_BATCH_SIZE: usize = 1000;

/// REST catalog implementation.
///
/// This catalog communicates with a Paimon REST catalog server
/// for all metadata operations (database and table CRUD).
///
/// Corresponds to Python `RESTCatalog` in `pypaimon/catalog/rest/rest_catalog.py`.
pub struct RESTCatalog {
    /// The REST API client (shared with RESTEnv).
    api: Arc<RESTApi>,
    /// Catalog configuration options.
    options: Options,
    /// Warehouse path.
    warehouse: String,
    /// Whether data token is enabled for FileIO construction.
    data_token_enabled: bool,
    /// Catalog-scoped cache shared by all table FileIO instances.
    local_cache: Option<Arc<LocalCache>>,
    file_io_cache: FileIOCacheContext,
}

impl RESTCatalog {
    /// Create a new REST catalog.
    ///
    /// # Arguments
    /// * `options` - Configuration options containing URI, warehouse, etc.
    /// * `config_required` - Whether to fetch config from server and merge with options.
    ///
    /// # Errors
    /// Returns an error if required options are missing or if initialization fails.
    pub async fn new(options: Options, config_required: bool) -> Result<Self> {
        let warehouse = options
            .get(CatalogOptions::WAREHOUSE)
            .cloned()
            .ok_or_else(|| RestError::BadRequest {
                message: format!("Missing required option: {}", CatalogOptions::WAREHOUSE),
            })?;
        let api = Arc::new(RESTApi::new(options.clone(), config_required).await?);

        let data_token_enabled = api
            .options()
            .get(CatalogOptions::DATA_TOKEN_ENABLED)
            .map(|v| v.eq_ignore_ascii_case("true"))
            .unwrap_or(false);

        let api_options = api.options().clone();
        let local_cache = create_local_cache_with_namespace(&options, &api_options)?;
        let file_io_cache = FileIOCacheContext::from_props(api_options.to_map())?;

        Ok(Self {
            api,
            options: api_options,
            warehouse,
            data_token_enabled,
            local_cache,
            file_io_cache,
        })
    }

    /// Get the warehouse path.
    pub fn warehouse(&self) -> &str {
        &self.warehouse
    }

    /// Get the catalog options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Whether data token is enabled.
    pub fn data_token_enabled(&self) -> bool {
        self.data_token_enabled
    }

    #[cfg(test)]
    fn has_local_cache(&self) -> bool {
        self.local_cache.is_some()
    }

    /// List databases with pagination.
    pub async fn list_databases_paged(
        &self,
        max_results: Option<u32>,
        page_token: Option<&str>,
        database_name_pattern: Option<&str>,
    ) -> Result<PagedList<String>> {
        self.api
            .list_databases_paged(max_results, page_token, database_name_pattern)
            .await
    }

    // ======================= permission management ==========================
    //
    // Like Java's `RESTCatalog.permissionManagement()`, these live on the REST catalog only
    // and are deliberately not part of the `Catalog` trait.

    pub async fn list_permissions_paged(
        &self,
        request: &ListPermissionsRequest,
    ) -> Result<PagedList<PermissionAssignment>> {
        self.api.list_permissions_paged(request).await
    }

    pub async fn grant_permission(&self, assignment: &PermissionAssignment) -> Result<()> {
        self.api.grant_permission(assignment).await
    }

    pub async fn revoke_permission(
        &self,
        resource: &PermissionResource,
        access: &str,
        principal: &str,
    ) -> Result<()> {
        self.api
            .revoke_permission(resource, access, principal)
            .await
    }

    // ======================= policy management ==============================
    //
    // Java `RESTCatalog.policyManagement()`.

    pub async fn list_policies_paged(
        &self,
        request: &ListPoliciesRequest,
    ) -> Result<PagedList<DataPolicy>> {
        self.api.list_policies_paged(request).await
    }

    pub async fn create_policy(&self, policy: &DataPolicy) -> Result<()> {
        self.api.create_policy(policy).await
    }

    pub async fn drop_policy(
        &self,
        resource: &PermissionResource,
        policy_type: PolicyType,
        principal: &str,
        column: Option<&str>,
        ignore_if_not_exists: bool,
    ) -> Result<()> {
        self.api
            .drop_policy(
                resource,
                policy_type,
                principal,
                column,
                ignore_if_not_exists,
            )
            .await
    }
}

// ============================================================================
// Catalog trait implementation
// ============================================================================

#[async_trait]
impl Catalog for RESTCatalog {
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
    // ======================= database methods ===============================

    async fn list_databases(&self) -> Result<Vec<String>> {
        self.api.list_databases().await
    }

    async fn create_database(
        &self,
        name: &str,
        ignore_if_exists: bool,
        properties: HashMap<String, String>,
    ) -> Result<()> {
        let result = self
            .api
            .create_database(name, Some(properties))
            .await
            .map_err(|e| map_rest_error_for_database(e, name));
        ignore_error_if(result, |e| {
            ignore_if_exists && matches!(e, Error::DatabaseAlreadyExist { .. })
        })
    }

    async fn get_database(&self, name: &str) -> Result<Database> {
        let response = self
            .api
            .get_database(name)
            .await
            .map_err(|e| map_rest_error_for_database(e, name))?;

        let mut options = response.options;
        if let Some(location) = response.location {
            options.insert(DB_LOCATION_PROP.to_string(), location);
        }

        Ok(Database::new(name.to_string(), options, None))
    }

    async fn drop_database(
        &self,
        name: &str,
        ignore_if_not_exists: bool,
        cascade: bool,
    ) -> Result<()> {
        // If not cascade, check if database is empty first
        if !cascade {
            let tables = match self.api.list_tables(name).await {
                Ok(tables) => tables,
                Err(err) => {
                    return ignore_error_if(Err(map_rest_error_for_database(err, name)), |e| {
                        ignore_if_not_exists && matches!(e, Error::DatabaseNotExist { .. })
                    });
                }
            };
            if !tables.is_empty() {
                return Err(Error::DatabaseNotEmpty {
                    database: name.to_string(),
                });
            }
        }

        let result = self
            .api
            .drop_database(name)
            .await
            .map_err(|e| map_rest_error_for_database(e, name));
        ignore_error_if(result, |e| {
            ignore_if_not_exists && matches!(e, Error::DatabaseNotExist { .. })
        })
    }

    // ======================= table methods ===============================

    async fn get_table(&self, identifier: &Identifier) -> Result<Table> {
        RESTEnv::load_table(
            identifier,
            self.api.clone(),
            self.options.clone(),
            self.data_token_enabled,
            self.local_cache.clone(),
            self.file_io_cache.clone(),
        )
        .await
    }

    async fn load_table(&self, identifier: &Identifier) -> Result<crate::catalog::LoadedTable> {
        let response = RESTEnv::fetch_table_response(identifier, &self.api).await?;
        if let Some(schema) = response.schema.as_ref() {
            let options = crate::spec::CoreOptions::new(schema.options());
            let declared = options.table_type()?;
            if declared == crate::spec::TableType::ObjectTable {
                return RESTEnv::build_object_table(
                    identifier,
                    response,
                    self.api.clone(),
                    self.options.clone(),
                    self.data_token_enabled,
                    self.local_cache.clone(),
                    self.file_io_cache.clone(),
                )
                .await
                .map(crate::catalog::LoadedTable::Object);
            }
            if declared.requires_table_engine() {
                return crate::catalog::LoadedTable::external_with_fields(
                    declared,
                    schema.fields().to_vec(),
                    &options,
                    &identifier.full_name(),
                );
            }
        }
        RESTEnv::build_table(
            identifier,
            response,
            self.api.clone(),
            self.options.clone(),
            self.data_token_enabled,
            self.local_cache.clone(),
            self.file_io_cache.clone(),
        )
        .await
        .map(|table| crate::catalog::LoadedTable::Paimon(Box::new(table)))
    }

    async fn list_tables(&self, database_name: &str) -> Result<Vec<String>> {
        self.api
            .list_tables(database_name)
            .await
            .map_err(|e| map_rest_error_for_database(e, database_name))
    }

    async fn create_table(
        &self,
        identifier: &Identifier,
        creation: Schema,
        ignore_if_exists: bool,
    ) -> Result<()> {
        let result = self
            .api
            .create_table(identifier, creation)
            .await
            .map_err(|e| map_rest_error_for_table(e, identifier));
        ignore_error_if(result, |e| {
            ignore_if_exists && matches!(e, Error::TableAlreadyExist { .. })
        })
    }

    async fn drop_table(&self, identifier: &Identifier, ignore_if_not_exists: bool) -> Result<()> {
        let result = self
            .api
            .drop_table(identifier)
            .await
            .map_err(|e| map_rest_error_for_table(e, identifier));
        ignore_error_if(result, |e| {
            ignore_if_not_exists && matches!(e, Error::TableNotExist { .. })
        })
    }

    async fn rename_table(
        &self,
        from: &Identifier,
        to: &Identifier,
        ignore_if_not_exists: bool,
    ) -> Result<()> {
        let result = self
            .api
            .rename_table(from, to)
            .await
            .map_err(|e| map_rest_error_for_table(e, from))
            // Remap TableAlreadyExist to use destination identifier
            .map_err(|e| match e {
                Error::TableAlreadyExist { .. } => Error::TableAlreadyExist {
                    full_name: to.full_name(),
                },
                other => other,
            });
        ignore_error_if(result, |e| {
            ignore_if_not_exists && matches!(e, Error::TableNotExist { .. })
        })
    }

    async fn alter_table(
        &self,
        identifier: &Identifier,
        changes: Vec<SchemaChange>,
        ignore_if_not_exists: bool,
    ) -> Result<()> {
        let result = self
            .api
            .alter_table(identifier, changes)
            .await
            .map_err(|e| map_rest_error_for_table(e, identifier));
        ignore_error_if(result, |e| {
            // `ignore_if_not_exists` is the `ALTER TABLE IF EXISTS` *table* flag,
            // matching `FileSystemCatalog` and the `Catalog::alter_table`
            // contract: it swallows only a missing table. A `ColumnNotExist` from
            // an existing table is a real schema failure (e.g. DROP of an absent
            // column, or a batch the server rejected atomically) and must surface,
            // or a caller would believe a column change persisted when it did not.
            ignore_if_not_exists && matches!(e, Error::TableNotExist { .. })
        })
    }

    async fn create_tag(
        &self,
        identifier: &Identifier,
        tag_name: &str,
        snapshot_id: Option<i64>,
        ignore_if_exists: bool,
    ) -> Result<()> {
        self.create_tag_with_retention(identifier, tag_name, snapshot_id, None, ignore_if_exists)
            .await
    }

    async fn create_tag_with_retention(
        &self,
        identifier: &Identifier,
        tag_name: &str,
        snapshot_id: Option<i64>,
        time_retained: Option<&str>,
        ignore_if_exists: bool,
    ) -> Result<()> {
        let result = self
            .api
            .create_tag_with_retention(identifier, tag_name, snapshot_id, time_retained)
            .await
            .map_err(|error| map_rest_error_for_tag(error, identifier, tag_name, snapshot_id));
        ignore_error_if(result, |error| {
            ignore_if_exists && matches!(error, Error::TagAlreadyExist { .. })
        })
    }

    async fn get_tag(&self, identifier: &Identifier, tag_name: &str) -> Result<GetTagResponse> {
        let response = self
            .api
            .get_tag(identifier, tag_name)
            .await
            .map_err(|error| map_rest_error_for_tag(error, identifier, tag_name, None))?;
        if response.tag_name != tag_name {
            return Err(Error::DataInvalid {
                message: format!(
                    "REST catalog returned tag '{}' for requested tag '{tag_name}'",
                    response.tag_name
                ),
                source: None,
            });
        }
        Ok(response)
    }

    async fn delete_tag(
        &self,
        identifier: &Identifier,
        tag_name: &str,
        ignore_if_not_exists: bool,
    ) -> Result<()> {
        let result = self
            .api
            .delete_tag(identifier, tag_name)
            .await
            .map_err(|error| map_rest_error_for_tag(error, identifier, tag_name, None));
        ignore_error_if(result, |error| {
            ignore_if_not_exists && matches!(error, Error::TagNotExist { .. })
        })
    }

    async fn create_view(
        &self,
        identifier: &Identifier,
        schema: crate::catalog::ViewSchema,
        ignore_if_exists: bool,
    ) -> Result<()> {
        let result = self
            .api
            .create_view(identifier, schema)
            .await
            .map_err(|error| map_rest_error_for_create_view(error, identifier));
        ignore_error_if(result, |error| {
            ignore_if_exists && matches!(error, Error::ViewAlreadyExist { .. })
        })
    }

    async fn list_views(&self, database_name: &str) -> Result<Vec<String>> {
        self.api
            .list_views(database_name)
            .await
            .map_err(|e| map_unsupported_endpoint(e, "view"))
    }

    async fn get_view(&self, identifier: &Identifier) -> Result<crate::catalog::View> {
        let response = self
            .api
            .get_view(identifier)
            .await
            .map_err(|e| map_rest_error_for_view(e, identifier))?;
        Ok(crate::catalog::View::new(
            identifier.clone(),
            response.schema,
        ))
    }

    async fn drop_view(&self, identifier: &Identifier, ignore_if_not_exists: bool) -> Result<()> {
        let result = self
            .api
            .drop_view(identifier)
            .await
            .map_err(|error| map_rest_error_for_view(error, identifier));
        ignore_error_if(result, |error| {
            ignore_if_not_exists && matches!(error, Error::ViewNotExist { .. })
        })
    }

    async fn list_functions(&self, database_name: &str) -> Result<Vec<String>> {
        self.api
            .list_functions(database_name)
            .await
            .map_err(|e| map_unsupported_endpoint(e, "function"))
    }

    async fn create_function(
        &self,
        function: &crate::catalog::Function,
        ignore_if_exists: bool,
    ) -> Result<()> {
        let result = self
            .api
            .create_function(function)
            .await
            .map_err(|error| map_rest_error_for_create_function(error, function.identifier()));
        ignore_error_if(result, |error| {
            ignore_if_exists && matches!(error, Error::FunctionAlreadyExist { .. })
        })
    }

    async fn get_function(&self, identifier: &Identifier) -> Result<crate::catalog::Function> {
        let response = self
            .api
            .get_function(identifier)
            .await
            .map_err(|e| map_rest_error_for_function(e, identifier))?;
        Ok(crate::catalog::Function::new(
            identifier.clone(),
            response.input_params,
            response.return_params,
            response.deterministic,
            response.definitions,
            response.comment,
            response.options,
        ))
    }

    async fn create_partitions_with_statistics(
        &self,
        identifier: &Identifier,
        partition_specs: Vec<HashMap<String, String>>,
        ignore_if_exists: bool,
        statistics: Option<Vec<PartitionStatistics>>,
        replace_statistics: bool,
    ) -> Result<()> {
        let statistics = statistics
            .map(|statistics| index_statistics_by_spec(identifier, &partition_specs, statistics))
            .transpose()?;
        if partition_specs.is_empty() {
            return Ok(());
        }
        // A strict create is rejected whole when any partition already exists, so it is never
        // split; an idempotent one is sent in bounded batches, each with its own statistics.
        let batch_size = if ignore_if_exists {
            PARTITION_BATCH_SIZE
        } else {
            partition_specs.len()
        };
        for batch in partition_specs.chunks(batch_size) {
            let batch_statistics = statistics.as_ref().map(|by_spec| {
                batch
                    .iter()
                    .filter_map(|spec| by_spec.get(&spec_key(spec)).cloned())
                    .collect::<Vec<_>>()
            });
            self.api
                .create_partitions_with_statistics(
                    identifier,
                    batch.to_vec(),
                    ignore_if_exists,
                    batch_statistics,
                    replace_statistics,
                )
                .await
                .map_err(|error| map_rest_error_for_create_partitions(error, identifier))?;
        }
        Ok(())
    }

    async fn drop_partitions(
        &self,
        identifier: &Identifier,
        partition_specs: Vec<HashMap<String, String>>,
    ) -> Result<()> {
        if partition_specs.is_empty() {
            return Ok(());
        }
        // The endpoint only unregisters metadata, which is the whole drop only for a Format Table
        // whose catalog owns the partitions; any other table would keep its data.
        let table = self.get_table(identifier).await?;
        if !table.has_catalog_managed_partitions() {
            return Err(Error::Unsupported {
                message: format!(
                    "Dropping partitions through the REST catalog is supported only for Format \
                     Tables with catalog-managed partitions, and {} is not one",
                    identifier.full_name()
                ),
            });
        }
        for batch in partition_specs.chunks(PARTITION_BATCH_SIZE) {
            self.api
                .drop_partitions(identifier, batch.to_vec(), true)
                .await
                .map_err(|error| map_rest_error_for_partition_request(error, identifier))?;
        }
        Ok(())
    }

    async fn list_partitions_by_names(
        &self,
        identifier: &Identifier,
        partition_specs: Vec<HashMap<String, String>>,
    ) -> Result<Vec<Partition>> {
        let mut partitions = Vec::new();
        for batch in partition_specs.chunks(PARTITION_BATCH_SIZE) {
            match self
                .api
                .list_partitions_by_names(identifier, batch.to_vec())
                .await
            {
                Ok(found) => partitions.extend(found),
                // A catalog without the lookup still answers the plain listing. That listing
                // never stands in directories for the registrations of a table whose catalog
                // manages its partitions, so neither does this lookup.
                Err(Error::RestApi {
                    source: RestError::NotImplemented { .. },
                }) => {
                    return Ok(self
                        .list_partitions(identifier)
                        .await?
                        .into_iter()
                        .filter(|partition| partition_specs.contains(&partition.spec))
                        .collect());
                }
                Err(error) => return Err(map_rest_error_for_table(error, identifier)),
            }
        }
        Ok(partitions)
    }

    async fn list_partitions(&self, identifier: &Identifier) -> Result<Vec<Partition>> {
        match self.api.list_partitions(identifier).await {
            Ok(parts) => Ok(parts),
            Err(
                error @ Error::RestApi {
                    source: RestError::NotImplemented { .. },
                },
            ) => {
                let table = self.get_table(identifier).await?;
                // The registrations of a catalog-managed table are its partitions; the
                // directories under it are not a substitute for them.
                if table.has_catalog_managed_partitions() {
                    return Err(error);
                }
                list_partitions_from_file_system(&table).await
            }
            Err(e) => Err(map_rest_error_for_table(e, identifier)),
        }
    }

    async fn list_partitions_paged(
        &self,
        identifier: &Identifier,
        max_results: Option<u32>,
        page_token: Option<&str>,
    ) -> Result<PagedList<Partition>> {
        match self
            .api
            .list_partitions_paged(identifier, max_results, page_token, None)
            .await
        {
            Ok(page) => Ok(page),
            Err(
                error @ Error::RestApi {
                    source: RestError::NotImplemented { .. },
                },
            ) => {
                let table = self.get_table(identifier).await?;
                if table.has_catalog_managed_partitions() {
                    return Err(error);
                }
                let parts = list_partitions_from_file_system(&table).await?;
                Ok(PagedList::new(parts, None))
            }
            Err(e) => Err(map_rest_error_for_table(e, identifier)),
        }
    }
}
// ============================================================================
// Error mapping helpers
// ============================================================================

/// Map a REST API error to a catalog-level database error.
///
/// Converts `RestError::NoSuchResource` -> `Error::DatabaseNotExist`,
/// `RestError::AlreadyExists` -> `Error::DatabaseAlreadyExist`,
/// and passes through other errors via `Error::RestApi`.
fn map_rest_error_for_database(err: Error, database_name: &str) -> Error {
    match err {
        Error::RestApi {
            source: RestError::NoSuchResource { .. },
        } => Error::DatabaseNotExist {
            database: database_name.to_string(),
        },
        Error::RestApi {
            source: RestError::AlreadyExists { .. },
        } => Error::DatabaseAlreadyExist {
            database: database_name.to_string(),
        },
        other => other,
    }
}

/// Map a REST API error to a catalog-level table error.
///
/// Converts `RestError::NoSuchResource` -> `Error::TableNotExist`,
/// `RestError::AlreadyExists` -> `Error::TableAlreadyExist`,
/// and passes through other errors via `Error::RestApi`.
///
/// Errors carrying a `column` resource type are restored to
/// `Error::ColumnNotExist` / `Error::ColumnAlreadyExist` so that a missing or
/// duplicate column is not reported as a table-level error (matching the
/// filesystem catalog).
fn map_rest_error_for_table(err: Error, identifier: &Identifier) -> Error {
    match err {
        Error::RestApi {
            source:
                RestError::NoSuchResource {
                    resource_type,
                    resource_name,
                    ..
                },
        } if resource_type
            .as_deref()
            .is_some_and(|kind| kind.eq_ignore_ascii_case("column")) =>
        {
            Error::ColumnNotExist {
                full_name: identifier.full_name(),
                column: resource_name.unwrap_or_default(),
            }
        }
        Error::RestApi {
            source:
                RestError::AlreadyExists {
                    resource_type,
                    resource_name,
                    ..
                },
        } if resource_type
            .as_deref()
            .is_some_and(|kind| kind.eq_ignore_ascii_case("column")) =>
        {
            Error::ColumnAlreadyExist {
                full_name: identifier.full_name(),
                column: resource_name.unwrap_or_default(),
            }
        }
        Error::RestApi {
            source: RestError::NoSuchResource { .. },
        } => Error::TableNotExist {
            full_name: identifier.full_name(),
        },
        Error::RestApi {
            source: RestError::AlreadyExists { .. },
        } => Error::TableAlreadyExist {
            full_name: identifier.full_name(),
        },
        other => other,
    }
}

fn map_rest_error_for_tag(
    error: Error,
    identifier: &Identifier,
    tag_name: &str,
    snapshot_id: Option<i64>,
) -> Error {
    match error {
        Error::RestApi {
            source: RestError::AlreadyExists { .. },
        } => Error::TagAlreadyExist {
            tag_name: tag_name.to_string(),
        },
        Error::RestApi {
            source:
                RestError::NoSuchResource {
                    resource_type,
                    resource_name,
                    ..
                },
        } if resource_type
            .as_deref()
            .is_some_and(|kind| kind.eq_ignore_ascii_case("snapshot")) =>
        {
            match snapshot_id.or_else(|| resource_name.and_then(|value| value.parse().ok())) {
                Some(snapshot_id) => Error::SnapshotNotExist { snapshot_id },
                None => Error::DataInvalid {
                    message: format!(
                        "Cannot create tag '{tag_name}' because the latest snapshot does not exist"
                    ),
                    source: None,
                },
            }
        }
        Error::RestApi {
            source: RestError::NoSuchResource { resource_type, .. },
        } if resource_type
            .as_deref()
            .is_some_and(|kind| kind.eq_ignore_ascii_case("tag")) =>
        {
            Error::TagNotExist {
                tag_name: tag_name.to_string(),
            }
        }
        Error::RestApi {
            source: RestError::NoSuchResource { .. },
        } => Error::TableNotExist {
            full_name: identifier.full_name(),
        },
        Error::RestApi {
            source: RestError::BadRequest { message },
        } => Error::DataInvalid {
            message,
            source: None,
        },
        other => map_unsupported_endpoint(other, "tag"),
    }
}

/// A partition spec in a form that can key a map.
fn spec_key(spec: &HashMap<String, String>) -> Vec<(String, String)> {
    let mut entries = spec
        .iter()
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect::<Vec<_>>();
    entries.sort_unstable();
    entries
}

/// Index reported statistics by the spec they describe, before anything is sent.
///
/// A partition registered twice is rejected: every occurrence would carry the same report, so a
/// spec repeated across batches would have an additive report applied once per batch. A report
/// for a partition that is not being created and a partition reported twice are rejected too: the
/// catalog cannot tell which of two reports is meant.
///
/// Mirrors Java `CatalogFormatTablePartitionManager.validateAndIndexStatistics`.
fn index_statistics_by_spec(
    identifier: &Identifier,
    partition_specs: &[HashMap<String, String>],
    statistics: Vec<PartitionStatistics>,
) -> Result<HashMap<Vec<(String, String)>, PartitionStatistics>> {
    let mut requested = std::collections::HashSet::with_capacity(partition_specs.len());
    for spec in partition_specs {
        if !requested.insert(spec_key(spec)) {
            return Err(Error::DataInvalid {
                message: format!(
                    "Partition {spec:?} of table {} is registered twice in one request that \
                     reports statistics; report each partition once",
                    identifier.full_name()
                ),
                source: None,
            });
        }
    }
    let mut by_spec = HashMap::with_capacity(statistics.len());
    for statistic in statistics {
        let key = spec_key(&statistic.spec);
        if !requested.contains(&key) {
            return Err(Error::DataInvalid {
                message: format!(
                    "Partition statistics were reported for {:?} of table {}, which is not among \
                     the partitions being created",
                    statistic.spec,
                    identifier.full_name()
                ),
                source: None,
            });
        }
        let spec = statistic.spec.clone();
        if by_spec.insert(key, statistic).is_some() {
            return Err(Error::DataInvalid {
                message: format!(
                    "Partition statistics were reported twice for {spec:?} of table {}",
                    identifier.full_name()
                ),
                source: None,
            });
        }
    }
    Ok(by_spec)
}

fn map_rest_error_for_create_partitions(err: Error, identifier: &Identifier) -> Error {
    match err {
        Error::RestApi {
            source: RestError::AlreadyExists { message, .. },
        } => Error::DataInvalid {
            message: format!(
                "One or more partitions already exist for table {}: {message}",
                identifier.full_name()
            ),
            source: None,
        },
        other => map_rest_error_for_partition_request(other, identifier),
    }
}

/// Map a REST API error from a partition request other than a create conflict.
fn map_rest_error_for_partition_request(err: Error, identifier: &Identifier) -> Error {
    match err {
        Error::RestApi {
            source: RestError::BadRequest { message },
        } => Error::DataInvalid {
            message: format!(
                "Invalid partition request for table {}: {message}",
                identifier.full_name()
            ),
            source: None,
        },
        other => map_rest_error_for_table(other, identifier),
    }
}

/// Map a REST API error from creating a persistent view.
fn map_rest_error_for_create_view(err: Error, identifier: &Identifier) -> Error {
    match err {
        Error::RestApi {
            source: RestError::NoSuchResource { .. },
        } => Error::DatabaseNotExist {
            database: identifier.database().to_string(),
        },
        other => map_rest_error_for_view(other, identifier),
    }
}

/// Map a REST API error to a catalog-level view error.
fn map_rest_error_for_view(err: Error, identifier: &Identifier) -> Error {
    match err {
        Error::RestApi {
            source: RestError::AlreadyExists { .. },
        } => Error::ViewAlreadyExist {
            full_name: identifier.full_name(),
        },
        Error::RestApi {
            source: RestError::NoSuchResource { .. },
        } => Error::ViewNotExist {
            full_name: identifier.full_name(),
        },
        other => map_unsupported_endpoint(other, "view"),
    }
}

/// Map a REST API error to a catalog-level function error.
fn map_rest_error_for_function(err: Error, identifier: &Identifier) -> Error {
    match err {
        Error::RestApi {
            source: RestError::NoSuchResource { .. },
        } => Error::FunctionNotExist {
            full_name: identifier.full_name(),
        },
        other => map_unsupported_endpoint(other, "function"),
    }
}

/// Map a REST API error from creating a persistent function.
fn map_rest_error_for_create_function(err: Error, identifier: &Identifier) -> Error {
    match err {
        Error::RestApi {
            source: RestError::NoSuchResource { .. },
        } => Error::DatabaseNotExist {
            database: identifier.database().to_string(),
        },
        Error::RestApi {
            source: RestError::AlreadyExists { .. },
        } => Error::FunctionAlreadyExist {
            full_name: identifier.full_name(),
        },
        other => map_unsupported_endpoint(other, "function"),
    }
}

fn map_unsupported_endpoint(err: Error, object_type: &str) -> Error {
    match err {
        Error::RestApi {
            source: RestError::NotImplemented { message },
        } => Error::Unsupported {
            message: format!("REST catalog {object_type} endpoint is not supported: {message}"),
        },
        other => other,
    }
}

/// Execute a fallible operation and ignore a specific error variant.
///
/// If the operation succeeds, returns `Ok(())`.
/// If it fails with an error that `should_ignore` returns `true` for, returns `Ok(())`.
/// Otherwise, returns the error.
fn ignore_error_if<F>(result: Result<()>, should_ignore: F) -> Result<()>
where
    F: Fn(&Error) -> bool,
{
    result.or_else(|err| {
        if should_ignore(&err) {
            Ok(())
        } else {
            Err(err)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn test_rest_catalog_builds_local_cache_from_client_options() {
        let mut options = Options::new();
        options.set(CatalogOptions::URI, "http://localhost:1");
        options.set(CatalogOptions::WAREHOUSE, "test-warehouse");
        options.set("token.provider", "bear");
        options.set("token", "test-token");
        options.set(CatalogOptions::LOCAL_CACHE_ENABLED, "true");

        let catalog = RESTCatalog::new(options, false).await.unwrap();

        assert!(catalog.has_local_cache());
    }

    #[test]
    fn test_tag_error_mapping() {
        let identifier = Identifier::new("db", "table");
        let error = |resource_type: &str| Error::RestApi {
            source: RestError::NoSuchResource {
                resource_type: Some(resource_type.to_string()),
                resource_name: None,
                message: "missing".to_string(),
            },
        };

        assert!(matches!(
            map_rest_error_for_tag(error("tag"), &identifier, "release", None),
            Error::TagNotExist { .. }
        ));
        assert!(matches!(
            map_rest_error_for_tag(error("snapshot"), &identifier, "release", Some(7)),
            Error::SnapshotNotExist { snapshot_id: 7 }
        ));
        assert!(matches!(
            map_rest_error_for_tag(error("table"), &identifier, "release", None),
            Error::TableNotExist { .. }
        ));
    }

    #[test]
    fn test_column_error_mapping() {
        let identifier = Identifier::new("db", "table");

        let not_exist = Error::RestApi {
            source: RestError::NoSuchResource {
                resource_type: Some("column".to_string()),
                resource_name: Some("age".to_string()),
                message: "missing".to_string(),
            },
        };
        match map_rest_error_for_table(not_exist, &identifier) {
            Error::ColumnNotExist { full_name, column } => {
                assert_eq!(full_name, "db.table");
                assert_eq!(column, "age");
            }
            other => panic!("expected ColumnNotExist, got {other:?}"),
        }

        let already_exist = Error::RestApi {
            source: RestError::AlreadyExists {
                resource_type: Some("COLUMN".to_string()),
                resource_name: Some("age".to_string()),
                message: "exists".to_string(),
            },
        };
        match map_rest_error_for_table(already_exist, &identifier) {
            Error::ColumnAlreadyExist { full_name, column } => {
                assert_eq!(full_name, "db.table");
                assert_eq!(column, "age");
            }
            other => panic!("expected ColumnAlreadyExist, got {other:?}"),
        }

        // A table-level 404 (no `column` resource type) must still map to
        // `TableNotExist`, not a column error.
        let table_missing = Error::RestApi {
            source: RestError::NoSuchResource {
                resource_type: None,
                resource_name: None,
                message: "missing".to_string(),
            },
        };
        assert!(matches!(
            map_rest_error_for_table(table_missing, &identifier),
            Error::TableNotExist { .. }
        ));
    }
}
