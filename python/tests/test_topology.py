# SPDX-License-Identifier: MIT
"""Topology: templates, importers (nvidia-smi, JSON), views and cluster topologies."""

import pytest

import hetsched

DLPERF = "data/topologies/nvidia-smi-topo/dgx1v-like_v100-sxm2x8_dlperf.txt"


def test_template_views():
    t = hetsched.node_template("dgx-a100")
    assert t.gpu_count == 8
    rel = t.relations()
    assert rel[0][0] == "X"
    assert rel[0][7] == "NV12"
    assert t.nccl_paths()[0][1] == "NVL"
    assert t.gpu_numa() == [3, 3, 1, 1, 7, 7, 5, 5]
    groups = t.affinity_groups()
    assert groups[0]["gpus"] == list(range(8))
    assert "dgx-a100" in hetsched.node_template_names()
    with pytest.raises(hetsched.NotFound) as e:
        hetsched.node_template("dgx-9000")
    assert "dgx-a100" in str(e.value)


def test_nvidia_smi_import_reproduces_matrix(shared):
    text = (shared / DLPERF).read_text()
    assert hetsched.detect_topology_format(text) == "nvidia_smi_topo"
    t = hetsched.import_nvidia_smi_topo(text, name="dlperf", gpu_model="V100-SXM2-16GB")
    assert t.name == "dlperf"
    assert t.gpu_count == 8 and t.nic_count == 1
    rel = t.relations()
    assert rel[0][1:5] == ["NV1", "NV1", "NV2", "NV2"]
    assert rel[0][5] == "SYS"
    assert rel[2][8] == "PIX"
    assert t.endpoints()[8] == "mlx5_0"
    # NVLink 2 (V100) runs 25000 MB/s per link: NV2 = 50000.
    assert t.bandwidths()[0][3] == 50000
    again = hetsched.import_topology(t.to_nvidia_smi())
    assert again.relations() == rel


def test_json_round_trip():
    t = hetsched.node_template("hgx-h100")
    doc = t.to_json(pretty=False)
    back = hetsched.import_topology_json(doc)
    assert back == t
    assert back.relations() == t.relations()
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.import_topology_json('{"format": "something-else"}')


def test_import_rejects_garbage():
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.import_topology("hello world")
    with pytest.raises(hetsched.InvalidArgument) as e:
        hetsched.import_nvidia_smi_topo("\tGPU0\tGPU1\nGPU0\tX\tNV9000\nGPU1\tNV9000\tX\n")
    assert "NV9000" in str(e.value)


def test_builtin_cluster_and_levels():
    c = hetsched.builtin_cluster("demo")
    assert c.node_count == 8 and c.gpu_count == 80
    nodes = c.nodes()
    assert nodes[0]["template"] == "dgx-a100"
    assert c.level_between(0, 1) == "node"
    assert c.level_between(0, 8) == "rack"
    model = c.to_cluster()
    assert model.device_count == 80
    assert model.nodes()[0]["labels"]["hetsched.io/topology"] == "dgx-a100"
    assert c.node_topology(0).gpu_count == 8
    assert "demo" in hetsched.builtin_cluster_names()
    with pytest.raises(hetsched.NotFound):
        hetsched.builtin_cluster("nope")


def test_custom_cluster_builder():
    c = hetsched.ClusterTopology(
        "lab", [{"template": "dgx-a100", "count": 4}, {"template": hetsched.node_template("pcie-8gpu"),
                                                     "count": 2, "prefix": "pcie"}],
        nodes_per_rack=2, rack_oversubscription=(2, 1),
        tiers=[{"name": "pod", "members": 2}])
    assert c.node_count == 6 and c.gpu_count == 48
    assert [n["name"] for n in c.nodes()][4:] == ["pcie-0", "pcie-1"]
    levels = [g["level"] for g in c.groups()]
    assert levels.count("rack") == 3 and levels.count("network_tier") == 2
    assert c.level_between(0, 16) == "network_tier"
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.ClusterTopology("bad", [{"template": "dgx-a100", "count": 2, "what": 1}])


def test_nccl_xml_import(shared):
    text = (shared / "data/topologies/nccl-topo-xml/azure-ndv4-topo.xml").read_text()
    assert hetsched.detect_topology_format(text) == "nccl_xml"
    t = hetsched.import_nccl_xml(text, name="ndv4", gpu_model="A100-SXM4-40GB")
    assert (t.name, t.gpu_count, t.nic_count) == ("ndv4", 8, 8)
    # GPU pairs share a PCIe switch with two NICs; the four switches hang off four NUMA nodes.
    assert t.relations()[0][:3] == ["X", "PIX", "SYS"]
    assert t.relations()[0][8:10] == ["PIX", "PIX"]
    assert t.gpu_numa() == [1, 1, 0, 0, 3, 3, 2, 2]
    assert hetsched.import_topology(text).gpu_count == 8
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.import_nccl_xml("<system><cpu></system>")


def test_import_topology_is_the_one_entry_point(shared):
    smi = (shared / "data/topologies/nvidia-smi-topo/dgx1v-like_v100-sxm2x8_dlperf.txt").read_text()
    t = hetsched.import_topology(smi, gpu_model="V100-SXM2-16GB", name="box")
    assert t.name == "box" and t.gpu_count == 8
    assert t == hetsched.import_nvidia_smi_topo(smi, name="box", gpu_model="V100-SXM2-16GB")
    hwloc = (shared / "data/topologies/hwloc/nvidiaDGX2.xml").read_text()
    with pytest.raises(hetsched.FailedPrecondition) as e:
        hetsched.import_topology(hwloc)
    assert "hwloc XML needs the hetsched::hwloc importer" in str(e.value)
