"""The error every dataset reader raises for a file, folder or row it cannot use, in a module
of its own so that code which only raises it (a label manifest, an options check) does not
load pyarrow."""


class DataError(Exception):
    """A dataset file or folder cannot be used; the message names it."""
