"""Graphs: the fabric as a graph for programs and graph tools (networkx, yEd, Gephi).

* :mod:`.topology` - ``<arch>/topology.json``, a networkx node-link multigraph;
* :mod:`.graphml` - ``<arch>/topology.graphml``, a GraphML multigraph.
"""
