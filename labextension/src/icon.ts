import { LabIcon } from '@jupyterlab/ui-components';

const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16" height="16">
  <g class="jp-icon3" fill="#616161">
    <path d="M4 4h16v3H4zM4 10h10v3H4zM4 16h7v3H4z"/>
    <path d="M17.5 12.5l1.2 2.5 2.8.4-2 2 .5 2.8-2.5-1.3-2.5 1.3.5-2.8-2-2 2.8-.4z"/>
  </g>
</svg>`;

/** The co-pilot's icon: rows of data and a star. */
export const dcpilotIcon = new LabIcon({ name: 'jupyter-dcpilot:icon', svgstr: svg });
