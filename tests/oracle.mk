# libnettrace against TraceEvent: tests/expected/traceevent-counts.tsv and
# traceevent-top.tsv are
# written by tools/oracle (C#, not built by make; see tools/oracle/README.md)
# from the traces in corpus/ and ../shared/corpus.
if HAVE_CRITERION
check_PROGRAMS += tests/test_oracle
TESTS += tests/test_oracle
endif

tests_test_oracle_SOURCES = tests/test_oracle.c
tests_test_oracle_CPPFLAGS = $(T_CPP)
tests_test_oracle_CFLAGS = $(T_CC)
tests_test_oracle_LDADD = $(T_LIBS)
tests_test_oracle_LDFLAGS = $(T_LINK)

# The expected tables, the project's own traces and how they are made.
# Files are listed one by one: the C# project folders hold bin/ and obj/
# after a build.
EXTRA_DIST += tests/expected/traceevent-counts.tsv tests/expected/traceevent-top.tsv \
	corpus/README.md corpus/record.sh corpus/call-tree.nettrace \
	corpus/spin-threads.nettrace corpus/spin-threads-dotnet-trace.nettrace \
	tests/workloads/SpinThreads/SpinThreads.csproj tests/workloads/SpinThreads/Program.cs \
	tests/workloads/CallTree/CallTree.csproj tests/workloads/CallTree/Program.cs \
	tools/oracle/Oracle.csproj tools/oracle/Program.cs tools/oracle/run.sh tools/oracle/README.md
