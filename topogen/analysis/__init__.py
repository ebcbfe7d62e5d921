"""Training analyses on the fabric topogen builds: pure models, one module per question.

``iteration``   Eq. 1 / Eq. 3 of the rail-only paper: iteration time against HB-domain size.
``alltoall``    uniform (MoE-style) all-to-all on rail-optimized and rail-only fabrics.
``checkpoint``  checkpoint size, writers, write/read bandwidth and overhead.
``dp_traffic``  bytes per GPU, per NIC (rail) and per NVLink of DDP, ZeRO, FSDP, HSDP, Megatron.
``params``      every model parameter with its unit, status ([paper]/[derived]/[fit]/[user]) and source.
``workload``    the spec's optional ``workload:`` section, model and GPU presets.
``fabric``      binds the models to a spec (N, K, B_S, B_F from the spec) and makes the rows.
``render``      text tables for the CLI.

The model modules are pure functions of numbers (SI units: bytes, seconds,
bytes/s, FLOP/s); nothing here prints, reads files or exits except
``workload`` (which reads preset YAML files).
"""
