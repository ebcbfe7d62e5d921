"""Growth: plan the next phase of an installed cluster without re-cabling it.

The phases, in order (:func:`topogen.growth.expansion.expand` runs them):

1. :mod:`.phase`: the installed phase read back from its build directory (its
   ``cabling.csv``, and the spec its ``summary.json`` records);
2. :mod:`.rewire`: the new spec's design laid around the installed cables: every
   installed cable whose two ends (device identity and port) the new design still
   has room for is kept; the others move (one end kept, the other re-plugged) or
   are removed; the new design's remaining links are added on free ports;
3. :mod:`.stages`: the moves in stages, each validated on its intermediate
   wiring and simulated (DP ring and a permutation of the installed GPUs, spray
   routing) for the share of bandwidth the running jobs keep;
4. :mod:`.delta`: the files installers and buyers use (delta CSV, final
   ``cabling.csv``, BOM to buy and spare, changed switches, Slurm topology), with
   :mod:`.floor` (the new wiring on the installed floor: installed racks and devices
   where they stand), :mod:`.addresses` (the address plans and FRR files of both
   wirings compared: what changes, only that) and :mod:`.networks` (the storage,
   in-band and OOB networks grown the same way);
5. :mod:`.phase` also reads an expansion's output stage by stage
   (``topogen validate`` / ``diff --stage``).

Library code: nothing here prints or exits.
"""
