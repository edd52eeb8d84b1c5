"""fabricscope: compare GPU clouds by time-to-train and cost for your workload, fabric included.

Rooms (docs/ARCHITECTURE.md): scrapers, warehouse, model, evidence, rank, procurement,
accuracy, ops, cli, app.
"""
