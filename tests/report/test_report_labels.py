"""How factor levels are labelled in reports."""
def test_load_counts_are_not_labelled_as_bytes():
    from faascope.analysis.levels import factor_info

    assert factor_info("burst_size", ["10", "100"]).kind == "plain"
    assert factor_info("batch_size", ["4"], "load.stagger.batch_size").kind == "plain"
    assert factor_info("io_size", ["512", "131072"]).labels == {"512": "512 B", "131072": "128 KiB"}
    assert factor_info("image_size", ["1048576"]).kind == "size"
