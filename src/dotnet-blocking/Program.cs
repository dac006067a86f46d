using DotnetBlocking;

// Exit codes: 0 done, 1 the process or trace could not be diagnosed (one line says why), 2 bad arguments (usage follows), 3 watch saw no starvation within its --timeout.
return DiagnoseCommands.Run(args, Console.Out, Console.Error);
