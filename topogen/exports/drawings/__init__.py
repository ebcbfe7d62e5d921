"""Drawings: diagrams and plots for people reading the design (reviews, slides).

* :mod:`.overview` - aggregated views of a fabric (tiers, groups, pods, rails as counted boxes);
* :mod:`.diagrams` - Graphviz diagrams of those views, rails and rack elevations;
* :mod:`.plots` - the workload's analyses as matplotlib plots.
"""
