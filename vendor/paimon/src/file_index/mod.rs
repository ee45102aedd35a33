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

// Concrete readers/writers and predicate plumbing stay crate-private until
// writer integration and the API surface are ready to stabilize.
#[allow(dead_code)]
pub(crate) mod bitmap;
#[allow(dead_code)]
pub(crate) mod bloom_filter;
#[allow(dead_code)]
pub(crate) mod bsi;
pub(crate) mod evaluator;
mod file_index_format;
#[allow(dead_code)]
pub(crate) mod file_index_predicate;
#[allow(dead_code)]
pub(crate) mod file_index_reader;
#[allow(dead_code)]
pub(crate) mod file_index_result;
#[allow(dead_code)]
pub(crate) mod file_index_writer;
#[allow(dead_code)]
pub(crate) mod file_indexer_factory;
#[allow(dead_code)]
pub(crate) mod range_bitmap;

pub use file_index_format::*;
