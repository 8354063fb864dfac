"""The Update Status Controller: informers, sync, incremental insights, publishing, alerts."""
