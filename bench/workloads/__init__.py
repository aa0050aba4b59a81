"""Workloads W1..W15; importing this package registers them all."""
from . import aggregation, buckets, durability, indexes, point_reads, range_reads, scan, transactions, updates, writes
from .base import REGISTRY, Context, Workload, ordered_ids
from .runner import run_workload

__all__ = ["REGISTRY", "Context", "Workload", "ordered_ids", "run_workload",
           "aggregation", "buckets", "durability", "indexes", "point_reads", "range_reads", "scan",
           "transactions", "updates", "writes"]
