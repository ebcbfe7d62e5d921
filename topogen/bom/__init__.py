"""Phase 5, the bill of materials: media per cable, priced BOM lines, and rail-only against rail-optimized.

The hardware catalog it prices from is an input, read in phase 1 (:mod:`topogen.spec.catalog`).

* :mod:`.media` - the medium of each cable, chosen by its length and the catalog's rules
* :mod:`.bill` - the BOM of one fabric, counted from its explicit wiring (``compile_bom``)
* :mod:`.compare` - both architectures side by side, for one spec or a sweep
"""
