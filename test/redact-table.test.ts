/**
 * Redaction over real-world MCP server command lines, as they appear in
 * client configs and READMEs: every credential hidden, nothing else touched.
 * Each row is [argv, what session_begin.command must say]; the second
 * table's rows must come through unchanged. Credential shapes are built by
 * concatenation so this file holds no literal that looks like a live one.
 */
import { describe, expect, test } from "bun:test";
import { redactArgv } from "../src/redact/argv.ts";
import { REDACTED as R } from "../src/redact/secret-values.ts";

const GHP = "ghp_" + "Z9".repeat(18);
const GLPAT = "glpat-" + "x".repeat(20);
const SK = "sk-" + "proj-" + "Q".repeat(40);
const SK_ANT = "sk-ant-" + "api03-" + "w".repeat(40);
const AKIA = "AKIA" + "Z".repeat(16);
const XOXB = "xoxb-" + "1".repeat(12) + "-" + "abcdefghij";
const SLACK_HOOK = "https://hooks.slack.com/services/" + "T0000000/B0000000/" + "X".repeat(24);
const DISCORD_HOOK = "https://discord.com/api/webhooks/" + "1".repeat(18) + "/" + "t".repeat(40);
const STRIPE = "sk_" + "live_" + "9".repeat(24);
const SENDGRID = "SG." + "a".repeat(22) + "." + "b".repeat(43);
const HF = "hf_" + "k".repeat(34);
const NPM = "npm_" + "n".repeat(36);
const GOOGLE = "AIza" + "g".repeat(35);
const DO = "dop_v1_" + "f".repeat(64);

const SECRET_LINES: [string[], string[]][] = [
  // the cases a neighbour found missing
  [
    ["sh", "-c", "exec node server.js --password hunter2 --port 8080"],
    ["sh", "-c", `exec node server.js --password ${R} --port 8080`],
  ],
  [
    ["bash", "-lc", "cd /srv && ./run --token=XYZ123 --verbose"],
    ["bash", "-lc", `cd /srv && ./run --token=${R} --verbose`],
  ],
  [
    ["curl", "-u", "admin:pass", "https://api.example.com/mcp"],
    ["curl", "-u", `admin:${R}`, "https://api.example.com/mcp"],
  ],
  [
    ["mcp-http", "--user=admin:pw", "--url", "https://h/x"],
    ["mcp-http", `--user=admin:${R}`, "--url", "https://h/x"],
  ],
  [
    ["mysql-mcp", "-uroot", "-pSECRET", "-h", "db"],
    ["mysql-mcp", "-uroot", `-p${R}`, "-h", "db"],
  ],
  [
    ["mysql-mcp", "-p", "SECRET", "-P", "3306"],
    ["mysql-mcp", "-p", R, "-P", "3306"],
  ],
  [
    ["tool", "-k", "abcdef0123456789", "--dir", "/data"],
    ["tool", "-k", R, "--dir", "/data"],
  ],
  [
    ["docker", "run", "-i", "--rm", "-eGH_PAT=" + GHP, "ghcr.io/github/github-mcp-server"],
    ["docker", "run", "-i", "--rm", `-eGH_PAT=${R}`, "ghcr.io/github/github-mcp-server"],
  ],
  [
    ["env", "GH_PAT=abc123def", "npx", "-y", "gh-mcp"],
    ["env", `GH_PAT=${R}`, "npx", "-y", "gh-mcp"],
  ],
  [
    ["srv", "--config", '{"host": "db", "pwd": "hunter2", "port": 5432}'],
    ["srv", "--config", `{"host": "db", "pwd": "${R}", "port": 5432}`],
  ],
  [
    ["srv", '{"user":"sa","pwd":12345}'],
    ["srv", `{"user":"sa","pwd":${R}}`],
  ],
  [
    ["notify-mcp", "--webhook", SLACK_HOOK],
    ["notify-mcp", "--webhook", `https://hooks.slack.com/services/${R}`],
  ],
  [
    ["notify-mcp", DISCORD_HOOK],
    ["notify-mcp", `https://discord.com/api/webhooks/${R}`],
  ],
  [
    ["srv", "--token", "-t", "XYZ"],
    ["srv", "--token", "-t", R],
  ],
  [
    ["srv", "--password", "-t", "XYZ", "--port", "1"],
    ["srv", "--password", "-t", R, "--port", "1"],
  ],
  // docker run -e, as the official servers' READMEs give it
  [
    ["docker", "run", "-i", "--rm", "-e", `GITHUB_PERSONAL_ACCESS_TOKEN=${GHP}`, "ghcr.io/github/github-mcp-server"],
    ["docker", "run", "-i", "--rm", "-e", `GITHUB_PERSONAL_ACCESS_TOKEN=${R}`, "ghcr.io/github/github-mcp-server"],
  ],
  [
    [
      "docker",
      "run",
      "-i",
      "--rm",
      "-e",
      `GITLAB_PERSONAL_ACCESS_TOKEN=${GLPAT}`,
      "-e",
      "GITLAB_API_URL=https://gitlab.com/api/v4",
      "mcp/gitlab",
    ],
    [
      "docker",
      "run",
      "-i",
      "--rm",
      "-e",
      `GITLAB_PERSONAL_ACCESS_TOKEN=${R}`,
      "-e",
      "GITLAB_API_URL=https://gitlab.com/api/v4",
      "mcp/gitlab",
    ],
  ],
  [
    ["docker", "run", "-i", "--rm", "-e", `SLACK_BOT_TOKEN=${XOXB}`, "-e", "SLACK_TEAM_ID=T01234567", "mcp/slack"],
    ["docker", "run", "-i", "--rm", "-e", `SLACK_BOT_TOKEN=${R}`, "-e", "SLACK_TEAM_ID=T01234567", "mcp/slack"],
  ],
  [
    ["docker", "run", "-i", "--rm", "-e", `BRAVE_API_KEY=${"B".repeat(31)}`, "mcp/brave-search"],
    ["docker", "run", "-i", "--rm", "-e", `BRAVE_API_KEY=${R}`, "mcp/brave-search"],
  ],
  [
    [
      "docker",
      "run",
      "-i",
      "--rm",
      "-e",
      `AWS_ACCESS_KEY_ID=${AKIA}`,
      "-e",
      "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG",
      "-e",
      "AWS_REGION=us-east-1",
      "mcp/aws-kb",
    ],
    [
      "docker",
      "run",
      "-i",
      "--rm",
      "-e",
      `AWS_ACCESS_KEY_ID=${R}`,
      "-e",
      `AWS_SECRET_ACCESS_KEY=${R}`,
      "-e",
      "AWS_REGION=us-east-1",
      "mcp/aws-kb",
    ],
  ],
  [
    ["docker", "run", "-i", "--rm", "--env", `OPENAI_API_KEY=${SK}`, "-v", "/home/u/data:/data", "mcp/rag"],
    ["docker", "run", "-i", "--rm", "--env", `OPENAI_API_KEY=${R}`, "-v", "/home/u/data:/data", "mcp/rag"],
  ],
  [
    ["docker", "run", "-i", "--rm", "-e", "POSTGRES_PASSWORD=s3cret", "-p", "5432:5432", "postgres-mcp"],
    ["docker", "run", "-i", "--rm", "-e", `POSTGRES_PASSWORD=${R}`, "-p", "5432:5432", "postgres-mcp"],
  ],
  // connection strings
  [
    ["npx", "-y", "@modelcontextprotocol/server-postgres", "postgresql://app:Tr0ub4dor@db.internal:5432/prod"],
    ["npx", "-y", "@modelcontextprotocol/server-postgres", `postgresql://${R}@db.internal:5432/prod`],
  ],
  [
    ["uvx", "mcp-server-mysql", "--url", "mysql://root:rootpw@127.0.0.1:3306/shop"],
    ["uvx", "mcp-server-mysql", "--url", `mysql://${R}@127.0.0.1:3306/shop`],
  ],
  [
    [
      "npx",
      "-y",
      "mongodb-mcp-server",
      "--connectionString",
      "mongodb+srv://admin:pa55@cluster0.abcde.mongodb.net/db?retryWrites=true",
    ],
    [
      "npx",
      "-y",
      "mongodb-mcp-server",
      "--connectionString",
      `mongodb+srv://${R}@cluster0.abcde.mongodb.net/db?retryWrites=true`,
    ],
  ],
  [
    ["uvx", "mcp-redis", "--url", "redis://:redispw@cache:6379/0"],
    ["uvx", "mcp-redis", "--url", `redis://${R}@cache:6379/0`],
  ],
  [
    ["uvx", "mcp-redis", "rediss://default:abc@host:6380"],
    ["uvx", "mcp-redis", `rediss://${R}@host:6380`],
  ],
  [
    ["mssql-mcp", "Server=tcp:db,1433;Database=app;User ID=sa;Password=Passw0rd;Encrypt=true"],
    ["mssql-mcp", `Server=tcp:db,1433;Database=app;User ID=sa;Password=${R};Encrypt=true`],
  ],
  [
    ["odbc-mcp", "Driver={ODBC Driver 18};Server=db;Uid=sa;Pwd=Passw0rd;"],
    ["odbc-mcp", `Driver={ODBC Driver 18};Server=db;Uid=sa;Pwd=${R};`],
  ],
  [
    [
      "azure-mcp",
      "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=abc123==;EndpointSuffix=core.windows.net",
    ],
    ["azure-mcp", `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${R};EndpointSuffix=core.windows.net`],
  ],
  [
    ["snowflake-mcp", "--account", "xy12345", "--user", "svc", "--password", "Snow!flake1"],
    ["snowflake-mcp", "--account", "xy12345", "--user", "svc", "--password", R],
  ],
  // uvx / npx with flags
  [
    ["uvx", "mcp-server-git", "--repository", "/repo", "--api-key", "k-123"],
    ["uvx", "mcp-server-git", "--repository", "/repo", "--api-key", R],
  ],
  [
    ["npx", "-y", "@notionhq/notion-mcp-server", "--auth-token=ntn_abc123"],
    ["npx", "-y", "@notionhq/notion-mcp-server", `--auth-token=${R}`],
  ],
  [
    ["npx", "-y", "tavily-mcp", "--tavily-api-key", "tvly-abc"],
    ["npx", "-y", "tavily-mcp", "--tavily-api-key", R],
  ],
  [
    ["uvx", "elevenlabs-mcp", "--elevenlabs-api-key=abc"],
    ["uvx", "elevenlabs-mcp", `--elevenlabs-api-key=${R}`],
  ],
  [
    ["npx", "-y", "@stripe/mcp", "--tools=all", `--api-key=${STRIPE}`],
    ["npx", "-y", "@stripe/mcp", "--tools=all", `--api-key=${R}`],
  ],
  [
    ["npx", "-y", "firecrawl-mcp", "--apiKey", "fc-123"],
    ["npx", "-y", "firecrawl-mcp", "--apiKey", R],
  ],
  [
    ["uvx", "mcp-atlassian", "--jira-token", "ATATT3x"],
    ["uvx", "mcp-atlassian", "--jira-token", R],
  ],
  [
    ["uvx", "mcp-atlassian", "--confluence-personal-token=abc"],
    ["uvx", "mcp-atlassian", `--confluence-personal-token=${R}`],
  ],
  [
    ["node", "build/index.js", "--client-secret", "cs_9", "--client-id", "app-1"],
    ["node", "build/index.js", "--client-secret", R, "--client-id", "app-1"],
  ],
  [
    ["python", "-m", "mcp_server", "--bearer", "tok"],
    ["python", "-m", "mcp_server", "--bearer", R],
  ],
  // env-prefixed commands
  [
    ["env", `ANTHROPIC_API_KEY=${SK_ANT}`, "npx", "-y", "srv"],
    ["env", `ANTHROPIC_API_KEY=${R}`, "npx", "-y", "srv"],
  ],
  [
    ["env", "-i", "PATH=/usr/bin", `HF_TOKEN=${HF}`, "uvx", "hf-mcp"],
    ["env", "-i", "PATH=/usr/bin", `HF_TOKEN=${R}`, "uvx", "hf-mcp"],
  ],
  [
    ["sh", "-c", `OPENAI_API_KEY=${SK} exec npx -y openai-mcp`],
    ["sh", "-c", `OPENAI_API_KEY=${R} exec npx -y openai-mcp`],
  ],
  [
    ["bash", "-c", "export DATABASE_URL=postgres://u:pw@h/db; exec mcp-pg"],
    ["bash", "-c", `export DATABASE_URL=postgres://${R}@h/db; exec mcp-pg`],
  ],
  [
    ["sh", "-c", "NPM_TOKEN=" + NPM + " npx srv"],
    ["sh", "-c", `NPM_TOKEN=${R} npx srv`],
  ],
  // cloud tokens by shape, wherever they stand
  [
    ["srv", SENDGRID],
    ["srv", R],
  ],
  [
    ["srv", `--header=X-Goog-Api-Key: ${GOOGLE}`],
    ["srv", `--header=X-Goog-Api-Key: ${R}`],
  ],
  [
    ["doctl-mcp", DO],
    ["doctl-mcp", R],
  ],
  [
    ["srv", "--endpoint", "https://api.example.com", `key:${AKIA}`],
    ["srv", "--endpoint", "https://api.example.com", `key:${R}`],
  ],
  [
    ["curl", "-H", `Authorization: Bearer ${SK}`, "https://mcp.example.com"],
    ["curl", "-H", `Authorization: ${R}`, "https://mcp.example.com"],
  ],
  [
    ["npx", "mcp-remote", "https://mcp.example.com/sse", "--header", "Authorization:Bearer abc"],
    ["npx", "mcp-remote", "https://mcp.example.com/sse", "--header", `Authorization:${R}`],
  ],
  [
    ["srv", "https://s3.amazonaws.com/b/k?X-Amz-Signature=abc&X-Amz-Expires=60"],
    ["srv", `https://s3.amazonaws.com/b/k?X-Amz-Signature=${R}&X-Amz-Expires=60`],
  ],
  [
    ["srv", "https://acct.blob.core.windows.net/c?sv=2022&sig=abc%2F"],
    ["srv", `https://acct.blob.core.windows.net/c?sv=2022&sig=${R}`],
  ],
];

/** Ordinary command lines: paths, URLs without credentials, numbers, ports, package names. */
const ORDINARY: string[][] = [
  ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "/Users/me/Downloads"],
  ["npx", "-y", "@modelcontextprotocol/server-everything"],
  ["npx", "-y", "-p", "@modelcontextprotocol/server-memory", "mcp-server-memory"],
  ["npx", "-p", "some-package", "bin"],
  ["uvx", "mcp-server-fetch", "--ignore-robots-txt", "--user-agent=MyBot/1.0"],
  ["uvx", "mcp-server-time", "--local-timezone=America/New_York"],
  ["uvx", "mcp-server-sqlite", "--db-path", "~/test.db"],
  ["uvx", "mcp-server-git", "--repository", "path/to/git/repo"],
  ["docker", "run", "-i", "--rm", "-p", "8080:80", "-p", "127.0.0.1:9000:9000/tcp", "mcp/fetch"],
  ["docker", "run", "-i", "--rm", "-u", "1000:1000", "-v", "/data:/data:ro", "mcp/filesystem", "/data"],
  ["docker", "run", "-i", "--rm", "--mount", "type=bind,src=/Users/me,dst=/projects", "mcp/filesystem", "/projects"],
  ["python", "-m", "http.server", "-p", "8000"],
  ["node", "/opt/servers/keys/build/index.js", "--max-tokens", "4096", "--timeout", "30"],
  ["curl", "-k", "https://localhost:8443/health"],
  ["curl", "-u", "admin", "https://api.example.com"],
  ["sh", "-c", "cd /srv/app && exec node dist/index.js --port 3000 --log-level debug"],
  ["bash", "-c", "exec uvx mcp-server-fetch --proxy-url http://proxy:3128"],
  ["mcp-proxy", "--sse-port", "8096", "--allow-origin", "*", "--", "uvx", "mcp-server-fetch"],
  ["srv", "--url", "https://api.github.com/repos/o/r?per_page=100&page=2"],
  ["srv", "postgresql://localhost:5432/dev", "redis://cache:6379/0", "mongodb://127.0.0.1:27017"],
  ["srv", '{"host": "db", "port": 5432, "ssl": true}'],
  ["srv", "--config", "./config/keys.yaml", "--token-file", "/run/secrets/token"],
  ["env", "NODE_ENV=production", "LOG_LEVEL=info", "PWD=/home/u", "node", "server.js"],
  ["srv", "-v", "-vv", "-n", "10", "-t", "5", "-x"],
  ["srv", "--key-file", "/etc/ssl/private/server.key", "--cert", "/etc/ssl/server.crt"],
];

describe("redaction over real-world server command lines", () => {
  test("the table is large enough to mean something", () => {
    expect(SECRET_LINES.length + ORDINARY.length).toBeGreaterThanOrEqual(60);
  });
  test.each(SECRET_LINES)("%j", (argv, expected) => {
    const r = redactArgv(argv);
    expect(r.argv).toEqual(expected);
    expect(r.redactions).toBeGreaterThan(0);
  });
  test.each(ORDINARY)("leaves %j untouched", (...argv) => {
    expect(redactArgv(argv)).toEqual({ argv, redactions: 0 });
  });
});
