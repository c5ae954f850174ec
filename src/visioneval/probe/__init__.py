"""Probes of what an endpoint does to the images it is sent, measured from its answers:
`resolution` estimates the resolution the model effectively sees."""
