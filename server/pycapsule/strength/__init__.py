"""How tightly a body's examples and the project's tests pin it down: mutants of the body (mutants.py) run
against them (check.py); a mutant none of them notices is a behaviour nothing checks."""
