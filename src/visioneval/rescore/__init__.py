"""Re-scoring another tool's per-sample outputs under visioneval's rules, with no request
sent: the tool's log is read as a stream, each logged answer becomes the record visioneval's
own run would have written, and the run directory is finished like any other."""
