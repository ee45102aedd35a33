//! Test harness: starts MariaDB, writes Paimon tables with the reference writers, runs the worker.
