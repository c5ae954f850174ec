"""Providers' batch APIs (OpenAI's Batch API, Anthropic's Message Batches): one request per
sample, sent as one job that answers within 24 hours at half the price (`--batch`)."""
