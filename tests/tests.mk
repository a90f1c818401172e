# Criterion tests
