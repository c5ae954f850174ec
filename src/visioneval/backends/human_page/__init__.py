"""The page a person answers a run's trials on (`--backend human`): the trial waiting for an
answer (`trial`), the small server on 127.0.0.1 that shows it (`server`), and the page's
template and script."""
