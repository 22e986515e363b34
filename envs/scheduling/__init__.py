"""Scheduling environments (flexible job shop: ``FJSP-v0``, ``FJSPImprove-v0``)."""
