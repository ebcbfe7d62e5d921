"""What every phase stands on: errors, reading input files, the output-directory contract, bundled templates,
text escaping, number formatting, progress and the memory policy. Nothing here knows about fabrics.

* :mod:`.errors` - InputError / Problem: bad input as data, shown with exit code 2
* :mod:`.inputs` - opening a user's input file: regular files only, bounded size
* :mod:`.outdir` - the output-directory contract: topogen replaces only what it wrote, atomically
* :mod:`.resources` - bundled presets and catalogs (importlib.resources)
* :mod:`.text` - the one escaping rule for CSV cells, one-line and XML-comment text
* :mod:`.figures` - how numbers read wherever a person reads them
* :mod:`.progress` - progress lines of a long build on stderr
* :mod:`.memory` - the program's memory policy for large numpy buffers
"""
