"""Bundled templates, shipped as the data package ``topogen.templates``.

Each subfolder is a kind (``clusters`` = presets, ``catalogs``, ...) of ``<name>.yaml``
files. This file only makes the folder an importable package, so that
``importlib.resources`` finds it from a wheel and from an editable checkout alike;
read templates through ``topogen/util/resources.py``.
"""
