"""Reports: one self-contained HTML page per run (tables, charts, a sample browser) and a
comparison of runs in the paper's Table 1 layout."""
