#!/usr/bin/env node
import { runCli } from './main.js';
import { processIo } from './terminal.js';

process.exitCode = await runCli(process.argv.slice(2), process.env, processIo());
