-- Upgrade from pg_textsearch 0.0.3 to 0.0.4
--
-- This release includes bug fixes and improvements but no schema changes.

-- No changes required for upgrade
