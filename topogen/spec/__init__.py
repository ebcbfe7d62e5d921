"""Phase 1, the spec: a cluster described in YAML (and flags) becomes a frozen, checked :class:`Spec`.

* :mod:`.cluster` - the parser: fields, defaults, every input error at once (``load_spec``, ``build_spec``)
* :mod:`.catalog` - hardware catalogs: switch, transceiver, cable and NIC SKUs, media rules (an input like the spec: the switches' own port names need it before the BOM)
* :mod:`.fields` - input limits and whole-number reading shared by the parser's parts
* :mod:`.counts` - the closed form: switches and links per tier that a spec implies, without a wiring
* :mod:`.units` - scalable units (SU): the ``scalable_unit`` fields and the SU port budget
* :mod:`.workload` - the optional ``workload:`` section, model and GPU presets
* :mod:`.layout` - the optional ``layout:`` section (racks, rows, cable slack)
* :mod:`.params` - a model parameter with its unit, status and source, as the outputs show it
* :mod:`.yamlfile` - reading a YAML input file so that it means what the user wrote
"""

from topogen.spec.cluster import Spec, build_spec, load_spec

__all__ = ["Spec", "build_spec", "load_spec"]
