/**
 * Redaction over real-world MCP server command lines, as they appear in
 * client configs and READMEs: every credential hidden, nothing else touched.
 * Each row is [argv, what session_begin.command must say]; the second
 * table's rows must come through unchanged. Credential shapes are built by
 * concatenation so this file holds no literal that looks like a live one.
 */
import { describe, expect, test } from "bun:test";
import { redactArgv } from "../../src/redact/argv.ts";
import { redactTarget } from "../../src/redact/http.ts";
import { REDACTED as R } from "../../src/redact/secret-values.ts";

const GHP = `ghp_${"Z9".repeat(18)}`;
const GLPAT = `glpat-${"x".repeat(20)}`;
const SK = `sk-proj-${"Q".repeat(40)}`;
const SK_ANT = `sk-ant-api03-${"w".repeat(40)}`;
const AKIA = `AKIA${"Z".repeat(16)}`;
const XOXB = `xoxb-${"1".repeat(12)}-abcdefghij`;
const SLACK_HOOK = `https://hooks.slack.com/services/T0000000/B0000000/${"X".repeat(24)}`;
const DISCORD_HOOK = `https://discord.com/api/webhooks/${"1".repeat(18)}/${"t".repeat(40)}`;
const STRIPE = `sk_live_${"9".repeat(24)}`;
const SENDGRID = `SG.${"a".repeat(22)}.${"b".repeat(43)}`;
const HF = `hf_${"k".repeat(34)}`;
const NPM = `npm_${"n".repeat(36)}`;
const GOOGLE = `AIza${"g".repeat(35)}`;
const DO = `dop_v1_${"f".repeat(64)}`;
const GLPAT_SHORT = `glpat-${"Ab3_".repeat(4)}`;
const NPM_SHORT = `npm_${"q".repeat(32)}`;
const GOOGLE_LONG = `AIzaSy${"h".repeat(33)}`;
const SENDGRID_SHORT = `SG.${"c".repeat(12)}.${"d".repeat(12)}`;
const TELEGRAM = `7${"1".repeat(8)}:AA${"T".repeat(33)}`;
const JWT = `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.${"s".repeat(20)}`;

/** A command line as its words (split on single spaces), so a row reads as a README shows it. */
const w = (line: string): string[] => line.split(" ");
/** A row: the command line, and what session_begin.command must say (`<R>` for each redaction). */
const line = (argv: string, want: string): [string[], string[]] => [w(argv), w(want.replaceAll("<R>", R))];

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
    ["docker", "run", "-i", "--rm", `-eGH_PAT=${GHP}`, "ghcr.io/github/github-mcp-server"],
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
    ["sh", "-c", `NPM_TOKEN=${NPM} npx srv`],
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

/**
 * Command lines as the READMEs of common MCP servers give them (env-var assignments, docker -e in
 * both forms, database clients, flags named for the credential), written out with made-up values.
 */
const README_LINES: [string[], string[]][] = [
  // database clients and their password variables
  line(
    "env PGPASSWORD=hunter2 npx -y @modelcontextprotocol/server-postgres postgresql://app@db/prod",
    "env PGPASSWORD=<R> npx -y @modelcontextprotocol/server-postgres postgresql://app@db/prod",
  ),
  line("env MYSQL_PWD=hunter2 uvx mysql-mcp-server", "env MYSQL_PWD=<R> uvx mysql-mcp-server"),
  line(
    "env SSHPASS=hunter2 sshpass -e ssh user@host mcp-server",
    "env SSHPASS=<R> sshpass -e ssh user@host mcp-server",
  ),
  line("docker run -i --rm -eMYSQL_PWD=hunter2 mcp/mysql", "docker run -i --rm -eMYSQL_PWD=<R> mcp/mysql"),
  line(
    "docker run -i --rm -ePGPASSWORD=hunter2 -ePGHOST=db mcp/postgres",
    "docker run -i --rm -ePGPASSWORD=<R> -ePGHOST=db mcp/postgres",
  ),
  line(
    "docker run -i --rm -e MYSQL_PASSWORD=hunter2 -e MYSQL_HOST=db -e MYSQL_USER=root mcp/mysql",
    "docker run -i --rm -e MYSQL_PASSWORD=<R> -e MYSQL_HOST=db -e MYSQL_USER=root mcp/mysql",
  ),
  line(
    "env MYSQL_HOST=127.0.0.1 MYSQL_PORT=3306 MYSQL_USER=root MYSQL_PASS=hunter2 MYSQL_DB=shop npx -y @benborla29/mcp-server-mysql",
    "env MYSQL_HOST=127.0.0.1 MYSQL_PORT=3306 MYSQL_USER=root MYSQL_PASS=<R> MYSQL_DB=shop npx -y @benborla29/mcp-server-mysql",
  ),
  line("env DB_PWD=hunter2 node build/index.js", "env DB_PWD=<R> node build/index.js"),
  line("mcp-mysql --host db --user root --pwd=hunter2", "mcp-mysql --host db --user root --pwd=<R>"),
  line("mcp-mysql --host db --pwd hunter2 --port 3306", "mcp-mysql --host db --pwd <R> --port 3306"),
  line(
    "mcp-mssql --server db --password=Passw0rd! --trust-server-certificate",
    "mcp-mssql --server db --password=<R> --trust-server-certificate",
  ),
  line(
    "uvx postgres-mcp --access-mode=unrestricted postgresql://svc:Sup3r@pg:5432/app",
    "uvx postgres-mcp --access-mode=unrestricted postgresql://<R>@pg:5432/app",
  ),
  line(
    "env DATABASE_URL=postgres://svc:Sup3r@pg/app npx -y @neondatabase/mcp-server-neon",
    "env DATABASE_URL=postgres://<R>@pg/app npx -y @neondatabase/mcp-server-neon",
  ),
  line(
    "uvx mcp-clickhouse --password hunter2 --host ch.internal",
    "uvx mcp-clickhouse --password <R> --host ch.internal",
  ),
  line("env CLICKHOUSE_PASSWORD=hunter2 uvx mcp-clickhouse", "env CLICKHOUSE_PASSWORD=<R> uvx mcp-clickhouse"),
  line(
    "env NEO4J_PASSWORD=hunter2 NEO4J_URI=bolt://localhost:7687 uvx mcp-neo4j-cypher",
    "env NEO4J_PASSWORD=<R> NEO4J_URI=bolt://localhost:7687 uvx mcp-neo4j-cypher",
  ),
  line(
    "uvx mcp-neo4j-memory --db-url neo4j://localhost:7687 --username neo4j --password hunter2",
    "uvx mcp-neo4j-memory --db-url neo4j://localhost:7687 --username neo4j --password <R>",
  ),
  line(
    "env SNOWFLAKE_PASSWORD=hunter2 SNOWFLAKE_ACCOUNT=xy12345 uvx mcp_snowflake_server",
    "env SNOWFLAKE_PASSWORD=<R> SNOWFLAKE_ACCOUNT=xy12345 uvx mcp_snowflake_server",
  ),
  line(
    "env REDIS_PWD=hunter2 REDIS_HOST=cache uvx redis-mcp-server",
    "env REDIS_PWD=<R> REDIS_HOST=cache uvx redis-mcp-server",
  ),
  line(
    "env ELASTICSEARCH_PASSWORD=hunter2 ELASTICSEARCH_USERNAME=elastic npx -y @elastic/mcp-server-elasticsearch",
    "env ELASTICSEARCH_PASSWORD=<R> ELASTICSEARCH_USERNAME=elastic npx -y @elastic/mcp-server-elasticsearch",
  ),
  line(
    "env ES_API_KEY=ZW5jb2RlZA== npx -y @elastic/mcp-server-elasticsearch",
    "env ES_API_KEY=<R> npx -y @elastic/mcp-server-elasticsearch",
  ),
  line("env MONGODB_PASSWORD=hunter2 npx -y mongodb-mcp-server", "env MONGODB_PASSWORD=<R> npx -y mongodb-mcp-server"),
  line("env RABBITMQ_PASSWORD=guest2 uvx mcp-server-rabbitmq", "env RABBITMQ_PASSWORD=<R> uvx mcp-server-rabbitmq"),
  line("env ORACLE_PASSWD=hunter2 oracle-mcp", "env ORACLE_PASSWD=<R> oracle-mcp"),
  line("env KEYSTORE_PASSPHRASE=open-sesame signer-mcp", "env KEYSTORE_PASSPHRASE=<R> signer-mcp"),
  // hosted APIs: the variable names the server READMEs use
  line(
    `env GITHUB_PERSONAL_ACCESS_TOKEN=${GHP} npx -y @modelcontextprotocol/server-github`,
    "env GITHUB_PERSONAL_ACCESS_TOKEN=<R> npx -y @modelcontextprotocol/server-github",
  ),
  line(
    `docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN=${GHP} -e GITHUB_TOOLSETS=repos,issues ghcr.io/github/github-mcp-server`,
    "docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN=<R> -e GITHUB_TOOLSETS=repos,issues ghcr.io/github/github-mcp-server",
  ),
  line(
    `env GITLAB_PERSONAL_ACCESS_TOKEN=${GLPAT_SHORT} GITLAB_API_URL=https://gitlab.example.com/api/v4 npx -y @modelcontextprotocol/server-gitlab`,
    "env GITLAB_PERSONAL_ACCESS_TOKEN=<R> GITLAB_API_URL=https://gitlab.example.com/api/v4 npx -y @modelcontextprotocol/server-gitlab",
  ),
  line(`gitlab-mcp ${GLPAT_SHORT}`, "gitlab-mcp <R>"),
  line(
    `env SLACK_BOT_TOKEN=${XOXB} SLACK_TEAM_ID=T01234567 SLACK_CHANNEL_IDS=C01,C02 npx -y @modelcontextprotocol/server-slack`,
    "env SLACK_BOT_TOKEN=<R> SLACK_TEAM_ID=T01234567 SLACK_CHANNEL_IDS=C01,C02 npx -y @modelcontextprotocol/server-slack",
  ),
  line(
    "env BRAVE_API_KEY=BSAabcdefghijklmnop npx -y @modelcontextprotocol/server-brave-search",
    "env BRAVE_API_KEY=<R> npx -y @modelcontextprotocol/server-brave-search",
  ),
  line(
    `env GOOGLE_MAPS_API_KEY=${GOOGLE_LONG} npx -y @modelcontextprotocol/server-google-maps`,
    "env GOOGLE_MAPS_API_KEY=<R> npx -y @modelcontextprotocol/server-google-maps",
  ),
  line(`maps-mcp --maps-key ${GOOGLE_LONG}`, "maps-mcp --maps-key <R>"),
  line(`maps-mcp ${GOOGLE_LONG}`, "maps-mcp <R>"),
  line(
    "env EVERART_API_KEY=ea-123 npx -y @modelcontextprotocol/server-everart",
    "env EVERART_API_KEY=<R> npx -y @modelcontextprotocol/server-everart",
  ),
  line("uvx mcp-server-sentry --auth-token sntrys_abc", "uvx mcp-server-sentry --auth-token <R>"),
  line(
    "env SENTRY_AUTH_TOKEN=sntrys_abc npx -y @sentry/mcp-server",
    "env SENTRY_AUTH_TOKEN=<R> npx -y @sentry/mcp-server",
  ),
  line(
    "npx -y @supabase/mcp-server-supabase --read-only --access-token sbp_abc123",
    "npx -y @supabase/mcp-server-supabase --read-only --access-token <R>",
  ),
  line("env SUPABASE_SERVICE_ROLE_KEY=abc123 supabase-mcp", "env SUPABASE_SERVICE_ROLE_KEY=<R> supabase-mcp"),
  line(
    "env NOTION_TOKEN=ntn_abc123 npx -y @notionhq/notion-mcp-server",
    "env NOTION_TOKEN=<R> npx -y @notionhq/notion-mcp-server",
  ),
  line("env LINEAR_API_KEY=lin_api_abc npx -y linear-mcp-server", "env LINEAR_API_KEY=<R> npx -y linear-mcp-server"),
  line(
    "env JIRA_API_TOKEN=ATATT3xFf CONFLUENCE_API_TOKEN=ATATT3xGg uvx mcp-atlassian",
    "env JIRA_API_TOKEN=<R> CONFLUENCE_API_TOKEN=<R> uvx mcp-atlassian",
  ),
  line("env EXA_API_KEY=exa-123 npx -y exa-mcp-server", "env EXA_API_KEY=<R> npx -y exa-mcp-server"),
  line(
    "env PERPLEXITY_API_KEY=pplx-123 npx -y server-perplexity-ask",
    "env PERPLEXITY_API_KEY=<R> npx -y server-perplexity-ask",
  ),
  line(
    "env TWILIO_AUTH_TOKEN=abc123 TWILIO_ACCOUNT_SID=AC123 npx -y @twilio-alpha/mcp",
    "env TWILIO_AUTH_TOKEN=<R> TWILIO_ACCOUNT_SID=AC123 npx -y @twilio-alpha/mcp",
  ),
  line(
    "env AIRTABLE_API_KEY=pat123.abc npx -y airtable-mcp-server",
    "env AIRTABLE_API_KEY=<R> npx -y airtable-mcp-server",
  ),
  line("env E2B_API_KEY=e2b_123 npx -y @e2b/mcp-server", "env E2B_API_KEY=<R> npx -y @e2b/mcp-server"),
  line("env KAGI_API_KEY=kg-123 uvx kagimcp", "env KAGI_API_KEY=<R> uvx kagimcp"),
  line(
    "npx -y figma-developer-mcp --figma-api-key=figd_abc --stdio",
    "npx -y figma-developer-mcp --figma-api-key=<R> --stdio",
  ),
  line("env HEROKU_API_KEY=abc-123 npx -y @heroku/mcp-server", "env HEROKU_API_KEY=<R> npx -y @heroku/mcp-server"),
  line(`env SENDGRID_API_KEY=${SENDGRID_SHORT} sendgrid-mcp`, "env SENDGRID_API_KEY=<R> sendgrid-mcp"),
  line(`mail-mcp --from ops@example.com ${SENDGRID_SHORT}`, "mail-mcp --from ops@example.com <R>"),
  line(`env TELEGRAM_BOT_TOKEN=${TELEGRAM} telegram-mcp`, "env TELEGRAM_BOT_TOKEN=<R> telegram-mcp"),
  line(`telegram-mcp --chat 12345 ${TELEGRAM}`, "telegram-mcp --chat 12345 <R>"),
  line("env DISCORD_TOKEN=MTA.abc.def discord-mcp", "env DISCORD_TOKEN=<R> discord-mcp"),
  line("env OBSIDIAN_API_KEY=abc123 uvx mcp-obsidian", "env OBSIDIAN_API_KEY=<R> uvx mcp-obsidian"),
  line(
    "env HA_TOKEN=abc.def HA_URL=http://homeassistant.local:8123 ha-mcp",
    "env HA_TOKEN=<R> HA_URL=http://homeassistant.local:8123 ha-mcp",
  ),
  line(
    "env CLOUDFLARE_API_TOKEN=cf-123 CLOUDFLARE_ACCOUNT_ID=abc npx -y @cloudflare/mcp-server-cloudflare",
    "env CLOUDFLARE_API_TOKEN=<R> CLOUDFLARE_ACCOUNT_ID=abc npx -y @cloudflare/mcp-server-cloudflare",
  ),
  line(`env NPM_TOKEN=${NPM_SHORT} npx -y npm-mcp`, "env NPM_TOKEN=<R> npx -y npm-mcp"),
  line(
    `registry-mcp --registry https://registry.npmjs.org ${NPM_SHORT}`,
    "registry-mcp --registry https://registry.npmjs.org <R>",
  ),
  line("env OPENROUTER_API_KEY=sk-or-v1-abc npx -y openrouter-mcp", "env OPENROUTER_API_KEY=<R> npx -y openrouter-mcp"),
  line(
    "env STRIPE_SECRET_KEY=abc123 npx -y @stripe/mcp --tools=all",
    "env STRIPE_SECRET_KEY=<R> npx -y @stripe/mcp --tools=all",
  ),
  line(
    "env SHOPIFY_ACCESS_TOKEN=abc123 MYSHOPIFY_DOMAIN=shop.myshopify.com shopify-mcp",
    "env SHOPIFY_ACCESS_TOKEN=<R> MYSHOPIFY_DOMAIN=shop.myshopify.com shopify-mcp",
  ),
  line(
    "env GOOGLE_CLIENT_SECRET=GOCSPX-abc GOOGLE_CLIENT_ID=123.apps.googleusercontent.com gdrive-mcp",
    "env GOOGLE_CLIENT_SECRET=<R> GOOGLE_CLIENT_ID=123.apps.googleusercontent.com gdrive-mcp",
  ),
  line(
    "env AZURE_OPENAI_API_KEY=abc AZURE_OPENAI_ENDPOINT=https://x.openai.azure.com azure-mcp",
    "env AZURE_OPENAI_API_KEY=<R> AZURE_OPENAI_ENDPOINT=https://x.openai.azure.com azure-mcp",
  ),
  // flags named for the credential
  line(`srv --jwt ${JWT}`, "srv --jwt <R>"),
  line(
    "srv --jwt=abc.def.ghi --jwt-issuer https://auth.example.com",
    "srv --jwt=<R> --jwt-issuer https://auth.example.com",
  ),
  line("srv --creds admin:hunter2", "srv --creds <R>"),
  line(
    "srv --creds=admin:hunter2 --creds-file /etc/srv/creds.json",
    "srv --creds=<R> --creds-file /etc/srv/creds.json",
  ),
  line("vpn-mcp --otp 123456 --otp-digits 6", "vpn-mcp --otp <R> --otp-digits 6"),
  line("sim-mcp --pin 1234 --device /dev/ttyUSB0", "sim-mcp --pin <R> --device /dev/ttyUSB0"),
  line("bank-mcp --passcode=9999", "bank-mcp --passcode=<R>"),
  line("oauth-mcp --refresh rt-abc123 --client-id app", "oauth-mcp --refresh <R> --client-id app"),
  line("oauth-mcp --refresh-token rt-abc123", "oauth-mcp --refresh-token <R>"),
  line("oauth-mcp --refresh_token=rt-abc123", "oauth-mcp --refresh_token=<R>"),
  line("srv --session-token abc --session-name dev", "srv --session-token <R> --session-name dev"),
  line("srv --private-key-passphrase open-sesame", "srv --private-key-passphrase <R>"),
  line("srv --db-pwd hunter2", "srv --db-pwd <R>"),
  line("srv --master-password=hunter2", "srv --master-password=<R>"),
  line("srv --auth admin:hunter2", "srv --auth <R>"),
  // one argument, many words
  [
    ["sh", "-c", "PGPASSWORD=hunter2 exec psql-mcp --host db"],
    ["sh", "-c", `PGPASSWORD=${R} exec psql-mcp --host db`],
  ],
  [
    ["bash", "-c", "export MYSQL_PWD=hunter2 && exec mysql-mcp"],
    ["bash", "-c", `export MYSQL_PWD=${R} && exec mysql-mcp`],
  ],
  [
    ["sh", "-c", "sshpass -p hunter2 ssh -T host mcp-server"],
    ["sh", "-c", `sshpass -p ${R} ssh -T host mcp-server`],
  ],
  [
    [
      "env",
      `OPENAPI_MCP_HEADERS={"Authorization": "Bearer ntn_abc", "Notion-Version": "2022-06-28"}`,
      "npx",
      "-y",
      "@notionhq/notion-mcp-server",
    ],
    [
      "env",
      `OPENAPI_MCP_HEADERS={"Authorization": "${R}", "Notion-Version": "2022-06-28"}`,
      "npx",
      "-y",
      "@notionhq/notion-mcp-server",
    ],
  ],
  [
    ["npx", "mcp-remote", "https://mcp.example.com/mcp", "--header", "X-API-Key: abc123"],
    ["npx", "mcp-remote", "https://mcp.example.com/mcp", "--header", `X-API-Key: ${R}`],
  ],
  [
    ["npx", "mcp-remote", "https://mcp.example.com/mcp", "--header", `PRIVATE-TOKEN:${GLPAT_SHORT}`],
    ["npx", "mcp-remote", "https://mcp.example.com/mcp", "--header", `PRIVATE-TOKEN:${R}`],
  ],
];

/**
 * URL shapes: where a credential sits in a URL (userinfo, query keys, path segments of webhook and bot
 * APIs) and URLs that hold none. Each is checked as a command-line argument and, as a request-target
 * (path and query), as seam proxy records it.
 */
const URLS: [string, string][] = [
  // credentials in the query
  ["https://api.example.com/mcp?api_key=abc123", "https://api.example.com/mcp?api_key=<R>"],
  ["https://api.example.com/mcp?apiKey=abc123&format=json", "https://api.example.com/mcp?apiKey=<R>&format=json"],
  ["https://api.example.com/mcp?access_token=abc123", "https://api.example.com/mcp?access_token=<R>"],
  ["https://api.example.com/mcp?token=abc123&page=2", "https://api.example.com/mcp?token=<R>&page=2"],
  [
    "https://gitlab.example.com/api/v4/projects?private_token=abc123",
    "https://gitlab.example.com/api/v4/projects?private_token=<R>",
  ],
  ["https://api.example.com/sse?key=abc123", "https://api.example.com/sse?key=<R>"],
  ["https://app.example.com/callback?code=4-0AbCd&state=xyz", "https://app.example.com/callback?code=<R>&state=xyz"],
  [
    "https://app.example.com/oauth/token?code_verifier=abc&grant_type=authorization_code",
    "https://app.example.com/oauth/token?code_verifier=<R>&grant_type=authorization_code",
  ],
  ["https://app.example.com/mcp?sessionid=abc123", "https://app.example.com/mcp?sessionid=<R>"],
  ["https://app.example.com/mcp?session_id=abc123", "https://app.example.com/mcp?session_id=<R>"],
  ["https://app.example.com/login;jsessionid=abc", "https://app.example.com/login;jsessionid=<R>"],
  ["https://app.example.com/mcp?JSESSIONID=abc&lang=en", "https://app.example.com/mcp?JSESSIONID=<R>&lang=en"],
  ["https://app.example.com/mcp?jwt=abc.def.ghi", "https://app.example.com/mcp?jwt=<R>"],
  ["https://app.example.com/mcp?auth=abc123", "https://app.example.com/mcp?auth=<R>"],
  [
    "https://app.example.com/mcp?client_secret=abc&client_id=app",
    "https://app.example.com/mcp?client_secret=<R>&client_id=app",
  ],
  ["https://app.example.com/mcp?password=hunter2&user=me", "https://app.example.com/mcp?password=<R>&user=me"],
  ["https://app.example.com/mcp?id_token=abc", "https://app.example.com/mcp?id_token=<R>"],
  [
    "https://bucket.s3.amazonaws.com/k?X-Amz-Credential=AKID&X-Amz-Signature=abc",
    "https://bucket.s3.amazonaws.com/k?X-Amz-Credential=<R>&X-Amz-Signature=<R>",
  ],
  [
    "https://storage.googleapis.com/b/o?X-Goog-Signature=abc&X-Goog-Date=20260101",
    "https://storage.googleapis.com/b/o?X-Goog-Signature=<R>&X-Goog-Date=20260101",
  ],
  ["https://acct.blob.core.windows.net/c/b?sp=r&sig=abc", "https://acct.blob.core.windows.net/c/b?sp=r&sig=<R>"],
  [
    `https://maps.googleapis.com/maps/api/geocode/json?address=x&key=${GOOGLE}`,
    "https://maps.googleapis.com/maps/api/geocode/json?address=x&key=<R>",
  ],
  [
    "https://app.example.com/cb#access_token=abc&token_type=bearer",
    "https://app.example.com/cb#access_token=<R>&token_type=bearer",
  ],
  // credentials in the path
  [`https://api.telegram.org/bot${TELEGRAM}/sendMessage`, "https://api.telegram.org/bot<R>/sendMessage"],
  [SLACK_HOOK, "https://hooks.slack.com/services/<R>"],
  [DISCORD_HOOK, "https://discord.com/api/webhooks/<R>"],
  [`https://api.example.com/v1/${SK}/models`, "https://api.example.com/v1/<R>/models"],
  // credentials in the userinfo
  ["https://user:pass@mcp.example.com/sse", "https://<R>@mcp.example.com/sse"],
  ["postgresql://app:Tr0ub4dor@db:5432/prod?sslmode=require", "postgresql://<R>@db:5432/prod?sslmode=require"],
  ["amqp://guest:guest2@mq:5672/vhost", "amqp://<R>@mq:5672/vhost"],
  [`https://${GHP}@github.com/o/r.git`, "https://<R>@github.com/o/r.git"],
  // no credential: left as they are
  ["https://api.example.com/mcp", "https://api.example.com/mcp"],
  ["https://api.example.com/mcp?page=2&per_page=100", "https://api.example.com/mcp?page=2&per_page=100"],
  ["https://example.com/search?q=token&sort=asc", "https://example.com/search?q=token&sort=asc"],
  ["https://example.com/docs/api-keys#rotating", "https://example.com/docs/api-keys#rotating"],
  ["https://app.example.com/callback?state=xyz&scope=read", "https://app.example.com/callback?state=xyz&scope=read"],
  ["https://git@github.com/o/r.git", "https://git@github.com/o/r.git"],
  ["http://127.0.0.1:8080/mcp?stream=true", "http://127.0.0.1:8080/mcp?stream=true"],
  ["http://localhost:3000/sse?session=new", "http://localhost:3000/sse?session=new"],
  ["https://api.example.com/v1/keys/12345", "https://api.example.com/v1/keys/12345"],
  ["https://registry.npmjs.org/@scope/pkg/-/pkg-1.2.3.tgz", "https://registry.npmjs.org/@scope/pkg/-/pkg-1.2.3.tgz"],
  [
    "https://example.com/a?token_type=bearer&expires_in=3600",
    "https://example.com/a?token_type=bearer&expires_in=3600",
  ],
  ["https://example.com/a?codec=h264&session_ttl=60", "https://example.com/a?codec=h264&session_ttl=60"],
  [
    "https://example.com/a?redirect_uri=https%3A%2F%2Fapp%2Fcb",
    "https://example.com/a?redirect_uri=https%3A%2F%2Fapp%2Fcb",
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
  w("npx -y @modelcontextprotocol/server-postgres postgresql://localhost/mydb"),
  w("npx -y @modelcontextprotocol/server-puppeteer"),
  w("npx -y @modelcontextprotocol/server-sequential-thinking"),
  w("uvx mcp-server-fetch --proxy-url http://proxy.internal:3128"),
  w("docker run -i --rm --init -e DOCKER_CONTAINER=true mcp/puppeteer"),
  w("docker run -i --rm -e SLACK_TEAM_ID=T01234567 -e SLACK_CHANNEL_IDS=C01,C02 mcp/slack"),
  w("docker run -i --rm -e GITLAB_API_URL=https://gitlab.com/api/v4 mcp/gitlab"),
  w("docker run -i --rm -eMYSQL_HOST=db -eMYSQL_PORT=3306 mcp/mysql"),
  w("env PWD=/srv/app OLDPWD=/srv node server.js"),
  w("env PGHOST=db PGPORT=5432 PGUSER=app PGDATABASE=prod psql-mcp"),
  w("env PGPASSFILE=/home/u/.pgpass psql-mcp"),
  w("srv --pwd /srv/app --refresh 30"),
  w("srv --refresh --interval 60"),
  w("srv --otp-digits 6 --pin-version 2 --jwt-issuer https://auth.example.com --jwt-audience mcp"),
  w("srv --creds-file /etc/srv/creds.json --passcode-length 6"),
  w("srv --code /srv/code --session /tmp/session.db"),
  w("git-mcp --repository /repos/app --branch main --depth 50"),
  w("kubectl-mcp --kubeconfig /home/u/.kube/config --context prod --namespace mcp"),
  w("aws-mcp --profile dev --region us-east-1"),
  w("gcloud-mcp --project my-proj-123 --zone europe-west1-b"),
  w("srv --bind 0.0.0.0:8080 --workers 4 --log-format json"),
  w("srv --tokenizer cl100k_base --max-tokens 8192 --temperature 0.2"),
  w("srv --no-auth --skip-auth-check --auth-type oauth --auth-url https://auth.example.com/authorize"),
  w("python -m mcp_server_time --local-timezone Europe/Berlin"),
  w("deno run --allow-net --allow-env=HOME server.ts"),
  w("java -jar /opt/mcp/server.jar --spring.profiles.active=prod --server.port=8081"),
  w("dotnet run --project ./Mcp.Server -- --verbose"),
  w("srv --sort-key created_at --primary-key id --partition-key tenant"),
  w("srv --session-ttl 3600 --session-name dev --code-dir ./code"),
  w("ssh -T -p 2222 user@host mcp-server"),
];

describe("redaction over real-world server command lines", () => {
  test("the table is large enough to mean something", () => {
    expect(SECRET_LINES.length + README_LINES.length + ORDINARY.length).toBeGreaterThanOrEqual(150);
    expect(URLS.length).toBeGreaterThanOrEqual(40);
  });
  test.each(README_LINES)("%j", (argv, expected) => {
    const r = redactArgv(argv);
    expect(r.argv).toEqual(expected);
    // At least one count per placeholder (a value hidden inside a value already hidden counts twice).
    expect(r.redactions).toBeGreaterThanOrEqual(expected.join(" ").split(R).length - 1);
  });
  test.each(URLS)("%s", (url, want) => {
    const expected = want.replaceAll("<R>", R);
    const n = expected.split(R).length - 1;
    expect(redactArgv(["srv", url])).toEqual({ argv: ["srv", expected], redactions: n });
    // As a request-target seam proxy records (userinfo and fragment never reach a server).
    const target = /^[a-z]+:\/\/[^/]+(\/[^#]*)$/.exec(url)?.[1];
    // Webhook paths are secret by their host, which a request-target does not carry.
    if (target !== undefined && !/@|hooks\.slack\.com|discord\.com/.test(url.split("/")[2]!)) {
      const want = /^[a-z]+:\/\/[^/]+(\/[^#]*)$/.exec(expected)![1]!;
      expect(redactTarget(target)).toEqual({ target: want, redactions: want.split(R).length - 1 });
    }
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
