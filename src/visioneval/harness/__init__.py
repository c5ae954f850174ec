"""The rules other harnesses and papers score by, shared by the benchmarks that compare them."""
