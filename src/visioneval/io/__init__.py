"""Reading data: parquet rows (with image columns streamed out of their pages) and encoded
images. A lower layer: nothing here imports the benchmarks, engine, report or commands."""
