"""The configure phase: the IP/ASN plan of a built fabric, per-switch configurations, and their proof.

* :mod:`topogen.spec.addressing`: the spec's ``addressing:`` section.
* :mod:`topogen.config.addressing`: the plan (loopbacks, link addresses, ASNs, VRFs/VLANs per rail).
* :mod:`topogen.config.paths`: where a switch's configuration file goes (subfolders per role and pod).
* :mod:`topogen.config.frr`: FRR ``frr.conf`` per switch.
* :mod:`topogen.config.emulate`: boots the FRR configurations in Linux network namespaces and checks them
  (its parts in :mod:`topogen.config.emulation`: lab, machine, resources, wiring, daemons, ECMP, checks, ICMP, link flap, report).
"""
