"""The runtime every command stands on: the API client, informer, leader election, loop,
process, serving, HTTP, and the Go-compatible text and parsing helpers.
"""
