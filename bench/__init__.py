"""Benchmarks run by `make bench`; results go to bench/results.md."""
