"""File loaders: one file in, Markdown parts out, one module (or package) per format.

Loaders are found through the ``shirabe.loaders`` entry points (:mod:`shirabe.loaders.registry`),
shirabe's own as well as those of other installed packages.
"""
