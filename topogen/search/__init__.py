"""Design-space search: which fabric gives the best training time per dollar and per kilowatt.

The phases, in order (:func:`topogen.search.run.search` runs them):

* :mod:`~topogen.search.space`    the ``search:`` section: the space, objectives, constraints;
* :mod:`~topogen.search.screen`   every point by the closed form (:mod:`topogen.counts`) and the
                                  catalog's media per tier: estimates, in microseconds a point;
* :mod:`~topogen.search.front`    Pareto fronts (on estimates with a slack, then on exact figures);
* :mod:`~topogen.search.explicit` build, validate and price one design with :func:`topogen.pipeline.build`
                                  (plain data in, plain data out: it runs in worker processes or on Dask);
* :mod:`~topogen.search.executor` where the explicit builds run: in-process, local workers or Dask;
* :mod:`~topogen.search.explain`  why each family of designs lost;
* :mod:`~topogen.search.report`   table, JSON, the chosen spec YAML, the plot, the output directory.
"""
