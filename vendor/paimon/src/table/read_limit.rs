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

use arrow_array::RecordBatch;

/// Consume the quota after merging and exact filtering. Slicing before output
/// BLOB resolution matches Java's lazy BlobDescriptorResolvingRow and
/// LimitRecordReader: discarded payloads remain untouched.
pub(super) fn take_limited_batch(batch: RecordBatch, remaining: &mut Option<usize>) -> RecordBatch {
    let Some(left) = remaining else { return batch };
    let taken = batch.num_rows().min(*left);
    *left -= taken;
    batch.slice(0, taken)
}
