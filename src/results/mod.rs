//! Benchmark, eval and power artifacts; Pareto frontiers and removed-point coverage (spec 40).
