"""The validator's parts; :mod:`topogen.checks.validate` runs them in order and is the public entry point.

* :mod:`.findings` - Finding, Report, Labels, the check-id catalogue
* :mod:`.wire` - the fabric's columns prepared once, device/port/cable names, the capped finding sink
* :mod:`.graphs` - numpy graph algorithms (components, leaf-to-leaf distance)
* :mod:`.planes` - the wiring as one graph per plane, and which GPUs are cut off
* :mod:`.hygiene`, :mod:`.tiers`, :mod:`.rails`, :mod:`.reach`, :mod:`.capacity`,
  :mod:`.failure` - the six checks, one ``check(...)`` each
* :mod:`.text` - how messages write port ranges, device lists and ratios
* :mod:`.render` - the report as terminal text
"""
