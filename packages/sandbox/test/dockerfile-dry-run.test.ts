import { describe, expect, it } from 'vitest';
import { DockerfileError, parseDockerfile } from '../src/dockerfile-dry-run.ts';

describe('parseDockerfile', () => {
  it('reads stages, continued lines, COPY --from and the exec-form ENTRYPOINT', () => {
    const instructions = parseDockerfile(
      [
        '# comment',
        'FROM node:24-bookworm-slim AS deps',
        'WORKDIR /app',
        'COPY package.json package-lock.json ./',
        'RUN npm ci \\',
        '    --omit=dev',
        'FROM node:24-bookworm-slim',
        'ENV NODE_ENV=production',
        'COPY --from=deps /app/node_modules ./node_modules',
        'USER node',
        'ENTRYPOINT ["node", "main.ts"]',
      ].join('\n'),
    );
    expect(instructions.map((i) => i.op)).toEqual([
      'FROM',
      'WORKDIR',
      'COPY',
      'RUN',
      'FROM',
      'ENV',
      'COPY',
      'USER',
      'ENTRYPOINT',
    ]);
    expect(instructions[0]).toMatchObject({ image: 'node:24-bookworm-slim', stage: 'deps', line: 2 });
    expect(instructions[2]).toMatchObject({
      sources: ['package.json', 'package-lock.json'],
      destination: './',
    });
    expect(instructions[3]).toMatchObject({ command: 'npm ci  --omit=dev', line: 5 });
    expect(instructions[6]).toMatchObject({
      from: 'deps',
      sources: ['/app/node_modules'],
      destination: './node_modules',
    });
    expect(instructions[8]).toMatchObject({ argv: ['node', 'main.ts'] });
  });

  it.each([
    ['ENTRYPOINT node main.ts', 'line 1: ENTRYPOINT must be the exec form'],
    ['WORKDIR app', 'line 1: WORKDIR must be an absolute path'],
    ['ADD https://example.com/x /x', 'line 1: ADD is not supported by this dry run'],
    ['COPY --chown=node x y', 'line 1: COPY has an option this dry run does not know'],
    ['FROM a b', 'line 1: FROM must be FROM <image> [AS <name>]'],
  ])('refuses %s, saying why', (text, message) => {
    expect(() => parseDockerfile(text)).toThrow(DockerfileError);
    expect(() => parseDockerfile(text)).toThrow(message);
  });
});
