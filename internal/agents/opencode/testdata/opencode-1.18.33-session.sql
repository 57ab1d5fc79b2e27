CREATE TABLE `session` (
          `id` text PRIMARY KEY,
          `project_id` text NOT NULL,
          `workspace_id` text,
          `parent_id` text,
          `slug` text NOT NULL,
          `directory` text NOT NULL,
          `path` text,
          `title` text NOT NULL,
          `version` text NOT NULL,
          `share_url` text,
          `summary_additions` integer,
          `summary_deletions` integer,
          `summary_files` integer,
          `summary_diffs` text,
          `metadata` text,
          `cost` real DEFAULT 0 NOT NULL,
          `tokens_input` integer DEFAULT 0 NOT NULL,
          `tokens_output` integer DEFAULT 0 NOT NULL,
          `tokens_reasoning` integer DEFAULT 0 NOT NULL,
          `tokens_cache_read` integer DEFAULT 0 NOT NULL,
          `tokens_cache_write` integer DEFAULT 0 NOT NULL,
          `revert` text,
          `permission` text,
          `agent` text,
          `model` text,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `time_compacting` integer,
          `time_archived` integer,
          CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
        );
CREATE INDEX `session_project_idx` ON `session` (`project_id`);
CREATE INDEX `session_workspace_idx` ON `session` (`workspace_id`);
CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);
CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE TABLE `part` (
          `id` text PRIMARY KEY,
          `message_id` text NOT NULL,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
        );
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
INSERT INTO session VALUES('ses_db9685d0affeV7ekVQOJhDJv4W','global',NULL,NULL,'happy-river','/tmp/oc1/work','tmp/oc1/work','Mock session','1.18.33',NULL,0,0,0,NULL,NULL,0.0,10,10,0,0,0,NULL,NULL,'build','{"id":"mock-model","providerID":"mock"}',1796480672501,1796480714678,NULL,NULL);
INSERT INTO message VALUES('msg_24697ca84001UXm78oXtrBXf9d','ses_db9685d0affeV7ekVQOJhDJv4W',1796480682629,1796480714880,'{"role":"user","time":{"created":1796480682629},"agent":"build","model":{"providerID":"mock","modelID":"mock-model"},"summary":{"diffs":[]}}');
INSERT INTO message VALUES('msg_24697ce09001T8ZjEnXefwLlA3','ses_db9685d0affeV7ekVQOJhDJv4W',1796480683529,1796480714059,'{"parentID":"msg_24697ca84001UXm78oXtrBXf9d","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/tmp/oc1/work","root":"/"},"cost":0,"tokens":{"total":20,"input":10,"output":10,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"mock-model","providerID":"mock","time":{"created":1796480683529,"completed":1796480713916},"finish":"stop"}');
INSERT INTO part VALUES('prt_24697caa1001tc48t29Kz4638q','msg_24697ca84001UXm78oXtrBXf9d','ses_db9685d0affeV7ekVQOJhDJv4W',1796480682798,1796480683029,'{"type":"text","text":"fx-single"}');
INSERT INTO part VALUES('prt_246983f44001Ni02zP2A3AkXZu','msg_24697ce09001T8ZjEnXefwLlA3','ses_db9685d0affeV7ekVQOJhDJv4W',1796480712517,1796480712593,'{"type":"step-start"}');
INSERT INTO part VALUES('prt_246983fe6001U6h1jc83LZ1zgA','msg_24697ce09001T8ZjEnXefwLlA3','ses_db9685d0affeV7ekVQOJhDJv4W',1796480712743,1796480713424,'{"type":"text","text":"Sending the report.\n\n@relay:Bob The nightly build failed in three places: the auth service tests time out after 30 seconds, the billing migration leaves a lock on the invoices table, and the web bundle is 12% over its size budget; please take the first two and tell me when they are fixed.\n\nDone.","time":{"start":1796480712678,"end":1796480713305}}');
INSERT INTO part VALUES('prt_246984354001YHMO4w7cMr9YW0','msg_24697ce09001T8ZjEnXefwLlA3','ses_db9685d0affeV7ekVQOJhDJv4W',1796480713569,1796480713616,'{"reason":"stop","type":"step-finish","tokens":{"total":20,"input":10,"output":10,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
