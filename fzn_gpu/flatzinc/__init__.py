"""The model layer: FlatZinc read (parser.py, quickparse.py for big files), lowered into typed
constraint tables and Aux variables (lower.py, registry.py's kinds, model.py's Model), and the
independent checker that every printed solution can be held to (check.py, check_globals.py).
Nothing here knows of devices or engines: it imports only the package's shared modules
(errors, settings)."""
