// No container engine runs here, so jobrelay's Dockerfiles are checked by doing what they say
// without one: each stage is a directory standing for the image's filesystem, COPY copies from
// the repository (or an earlier stage), RUN runs its command there, and the last stage's
// ENTRYPOINT is started with --help. A package the image forgets to copy, or an `npm ci` that
// cannot install from the files copied so far, fails here as it would in `docker build` or at
// the container's start. What it cannot check: the base image itself (Node 24 on Debian slim is
// stood in for by this machine's Node 24 and shell).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, isAbsolute, join } from 'node:path';

export type DockerInstruction =
  | { op: 'FROM'; image: string; stage?: string; line: number }
  | { op: 'WORKDIR'; path: string; line: number }
  | { op: 'COPY'; from?: string; sources: string[]; destination: string; line: number }
  | { op: 'RUN'; command: string; line: number }
  | { op: 'ENV'; name: string; value: string; line: number }
  | { op: 'USER'; user: string; line: number }
  | { op: 'EXPOSE'; port: string; line: number }
  | { op: 'ENTRYPOINT'; argv: string[]; line: number };

export class DockerfileError extends Error {}

/** The instructions of a Dockerfile that uses only what jobrelay's do; anything else is an error. */
export function parseDockerfile(text: string): DockerInstruction[] {
  const instructions: DockerInstruction[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i + 1;
    let line = lines[i]!;
    while (line.endsWith('\\') && i + 1 < lines.length) line = `${line.slice(0, -1)} ${lines[++i]!.trim()}`;
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const [keyword = '', ...rest] = trimmed.split(/\s+/);
    const args = trimmed.slice(keyword.length).trim();
    const fail = (why: string) => new DockerfileError(`line ${start}: ${keyword} ${why}`);
    switch (keyword.toUpperCase()) {
      case 'FROM': {
        if (rest.length !== 1 && !(rest.length === 3 && rest[1]!.toUpperCase() === 'AS'))
          throw fail('must be FROM <image> [AS <name>]');
        instructions.push({
          op: 'FROM',
          image: rest[0]!,
          ...(rest[2] ? { stage: rest[2] } : {}),
          line: start,
        });
        break;
      }
      case 'WORKDIR':
        if (!args.startsWith('/')) throw fail('must be an absolute path');
        instructions.push({ op: 'WORKDIR', path: args, line: start });
        break;
      case 'COPY': {
        const from = rest[0]?.startsWith('--from=') ? rest.shift()!.slice('--from='.length) : undefined;
        if (rest.some((word) => word.startsWith('--')))
          throw fail('has an option this dry run does not know');
        if (rest.length < 2) throw fail('needs a source and a destination');
        instructions.push({
          op: 'COPY',
          ...(from ? { from } : {}),
          sources: rest.slice(0, -1),
          destination: rest[rest.length - 1]!,
          line: start,
        });
        break;
      }
      case 'RUN':
        instructions.push({ op: 'RUN', command: args, line: start });
        break;
      case 'ENV': {
        const match = /^(\w+)=(\S+)$/.exec(args);
        if (!match) throw fail('must be ENV NAME=value');
        instructions.push({ op: 'ENV', name: match[1]!, value: match[2]!, line: start });
        break;
      }
      case 'USER':
        instructions.push({ op: 'USER', user: args, line: start });
        break;
      case 'EXPOSE':
        instructions.push({ op: 'EXPOSE', port: args, line: start });
        break;
      case 'ENTRYPOINT': {
        let argv: unknown;
        try {
          argv = JSON.parse(args);
        } catch {
          throw fail('must be the exec form, a JSON array (signals reach the process only then)');
        }
        if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string'))
          throw fail('must be a JSON array of strings');
        instructions.push({ op: 'ENTRYPOINT', argv: argv as string[], line: start });
        break;
      }
      default:
        throw fail('is not supported by this dry run');
    }
  }
  return instructions;
}

interface Stage {
  name: string;
  root: string;
  workdir: string;
  env: Record<string, string>;
  user: string;
  entrypoint?: string[];
}

export interface DryRunResult {
  /** Stages in order (the directories that stood for their filesystems are removed before this returns). */
  stages: Array<{ name: string; image: string; user: string }>;
  /** The final stage's ENTRYPOINT started with `entrypointArgs`. */
  entrypoint: { argv: string[]; code: number | null; stdout: string; stderr: string };
}

/**
 * Runs the Dockerfile against `context` (the repository) as described above. `runEnv` is the
 * environment RUN commands and the entrypoint get (PATH must lead to Node 24 and npm).
 */
export function dryRunDockerfile(
  dockerfile: string,
  context: string,
  options: { runEnv: NodeJS.ProcessEnv; entrypointArgs: string[]; log?: (line: string) => void },
): DryRunResult {
  const instructions = parseDockerfile(readFileSync(dockerfile, 'utf8'));
  const scratch = mkdtempSync(join(tmpdir(), `dockerfile-${basename(dockerfile)}-`));
  // Removed however this ends: nothing returned points into it (names, images, users, output).
  try {
    const stages: Stage[] = [];
    const images: string[] = [];
    const inStage = (stage: Stage, path: string) =>
      join(stage.root, isAbsolute(path) ? path : join(stage.workdir, path));
    for (const instruction of instructions) {
      const stage = stages[stages.length - 1];
      if (instruction.op === 'FROM') {
        const name = instruction.stage ?? String(stages.length);
        const root = join(scratch, `stage-${stages.length}`);
        mkdirSync(root, { recursive: true });
        stages.push({ name, root, workdir: '/', env: {}, user: 'root' });
        images.push(instruction.image);
        continue;
      }
      if (!stage) throw new DockerfileError(`line ${instruction.line}: ${instruction.op} before FROM`);
      options.log?.(`[${stage.name}] ${instruction.op} ${JSON.stringify(instruction).slice(0, 160)}`);
      switch (instruction.op) {
        case 'WORKDIR':
          stage.workdir = instruction.path;
          mkdirSync(inStage(stage, '.'), { recursive: true });
          break;
        case 'COPY': {
          const source =
            instruction.from === undefined ? undefined : stages.find((s) => s.name === instruction.from);
          if (instruction.from !== undefined && !source)
            throw new DockerfileError(
              `line ${instruction.line}: COPY --from=${instruction.from}: no earlier stage of that name`,
            );
          const destination = inStage(stage, instruction.destination);
          const intoDirectory = instruction.destination.endsWith('/') || instruction.sources.length > 1;
          for (const path of instruction.sources) {
            const from = source ? join(source.root, path) : join(context, path);
            if (!existsSync(from))
              throw new DockerfileError(
                `line ${instruction.line}: COPY ${path}: not found in ${source ? `stage ${source.name}` : 'the build context'}`,
              );
            const to =
              intoDirectory && !statSync(from).isDirectory()
                ? join(destination, basename(path))
                : destination;
            // Symlinks as they are, as COPY keeps them (npm links workspaces with relative ones).
            cpSync(from, to, { recursive: true, verbatimSymlinks: true });
          }
          break;
        }
        case 'RUN': {
          const run = spawnSync('bash', ['-euo', 'pipefail', '-c', instruction.command], {
            cwd: inStage(stage, '.'),
            env: { ...options.runEnv, ...stage.env },
            encoding: 'utf8',
          });
          if (run.status !== 0)
            throw new DockerfileError(
              `line ${instruction.line}: RUN ${instruction.command} exited ${run.status}:\n${run.stderr.slice(-2000)}`,
            );
          break;
        }
        case 'ENV':
          stage.env[instruction.name] = instruction.value;
          break;
        case 'USER':
          stage.user = instruction.user;
          break;
        case 'EXPOSE':
          break;
        case 'ENTRYPOINT':
          stage.entrypoint = instruction.argv;
          break;
      }
    }
    const last = stages[stages.length - 1];
    if (!last?.entrypoint) throw new DockerfileError('the last stage has no ENTRYPOINT');
    const [program, ...args] = last.entrypoint;
    const started = spawnSync(program!, [...args, ...options.entrypointArgs], {
      cwd: inStage(last, '.'),
      env: { ...options.runEnv, ...last.env },
      encoding: 'utf8',
      // Loading every module the process imports takes seconds alone, more than a minute beside
      // four e2e lanes on two cores: a limit against a hang, not a measure of start-up.
      timeout: 180_000,
    });
    return {
      stages: stages.map((s, i) => ({ name: s.name, image: images[i]!, user: s.user })),
      entrypoint: {
        argv: last.entrypoint,
        code: started.status,
        stdout: started.stdout,
        stderr: started.stderr,
      },
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
