// Load tests own the machine while they run; functional test classes run in parallel with each other only, four at a
// time: most of their time is spent waiting on a scenario's delay, so four keep two cores busy (the functional tests took
// 62 s two at a time, 52 s four at a time, on the 2-core machine).
[assembly: CollectionBehavior(MaxParallelThreads = 4)]

// Within that, the longest functional classes start first (StartsEarly, then StartsNext), the rest by name.
[assembly: TestCollectionOrderer("DiagnosticScenarios.Tests.Support.LongClassesFirst", "DiagnosticScenarios.Tests")]
