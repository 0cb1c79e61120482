#!/usr/bin/env node
/** The `natives-mcp` command: see main.ts. */
import { main } from './main.ts';

process.exitCode = await main(process.argv.slice(2));
// Native watch threads must not keep a finished server alive.
process.exit();
