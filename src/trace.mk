# trace component: library sources, tool commands and tests
