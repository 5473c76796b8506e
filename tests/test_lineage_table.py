"""The audit's lineage table prints numbers as people write them."""

import lineage_table


def test_a_scaled_learning_rate_reads_as_written():
    assert lineage_table.as_written(5e-07 * 100) == "5e-05"  # 4.9999999999999996e-05 as Python prints it
    assert lineage_table.as_written(0.1) == "0.1" and lineage_table.as_written(24) == 24
