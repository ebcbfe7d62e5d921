"""NetBox: bulk-import CSVs of DCIM and IPAM, in NetBox 4.x's import order.

* :mod:`.dcim` - the compute fabric's sites, racks, device types, devices, interfaces and cables;
* :mod:`.networks` - the ``netbox`` exporter: :mod:`.dcim`'s files, then the storage, in-band and
  OOB networks' racks, devices, interfaces, cables and address plan;
* :mod:`.ipam_rows` - the IPAM rows of the addressing plan (RIR, ASNs, VRFs, prefixes, addresses);
* :mod:`.ipam` - the ``ipam`` exporter: :mod:`.ipam_rows` written as ``netbox/ipam/`` files.
"""
