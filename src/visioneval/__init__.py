"""visioneval: measure how well vision-language models see."""


def __getattr__(name: str) -> str:
    # Resolved on first use: importlib.metadata costs ~80 ms, too much for `--help`.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("visioneval")
        except PackageNotFoundError:  # a source tree that was never installed
            return "0+unknown"
    raise AttributeError(name)
