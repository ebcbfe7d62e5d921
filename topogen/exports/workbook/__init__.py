"""Workbook: procurement's spreadsheet (LibreOffice, Excel) and the bill of materials.

* :mod:`.book` - ``<name>.xlsx``, the procurement workbook;
* :mod:`.stream` - streamed SpreadsheetML for the workbook's large sheets;
* :mod:`.bom` - ``<arch>/bom.csv`` and ``bom.json``.
"""
