"""An emulation of the RPi package for machines without a Pi: only RPi.GPIO, with HX711 chips behind its pins."""
