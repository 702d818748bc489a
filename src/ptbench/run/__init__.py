"""The run engine: catalog tasks exported as Harbor task dirs (`export`), agents named (`agents`), one
Harbor job per `ptbench run` (`jobs`) checked before it starts (`preflight`) and shown live (`progress`)."""
